"""OWSLib (Debian python3-owslib) and ElementTree against nadir's WMTS, for wmts-clients.test.ts.

argv[1]: a JSON object
  capabilities: the capabilities URL with the key, as a user pastes it
  tiles: [{layer, tilematrix, row, column, format, time?}] to fetch with OWSLib's gettile()
  probes: [url] to fetch and read as OWS ExceptionReports
Prints a JSON object: what OWSLib read of the service, each tile's bytes (base64), and each
probe's status, content type and exception (code, locator, text).
"""
import base64
import json
import sys
import urllib.error
import urllib.request
import xml.etree.ElementTree as ElementTree

from owslib.util import ServiceException
from owslib.wmts import WebMapTileService

OWS = "{http://www.opengis.net/ows/1.1}"


def tile(service, request):
    extra = {"TIME": request["time"]} if request.get("time") else {}
    try:
        answer = service.gettile(
            layer=request["layer"],
            tilematrixset="GoogleMapsCompatible",
            tilematrix=request["tilematrix"],
            row=request["row"],
            column=request["column"],
            format=request["format"],
            **extra,
        )
    except ServiceException as error:
        return {"error": str(error)}
    return {"bytes": base64.b64encode(answer.read()).decode("ascii"), "type": answer.info()["Content-Type"]}


def probe(url):
    try:
        with urllib.request.urlopen(url) as answer:
            status, content_type, body = answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as error:
        status, content_type, body = error.code, error.headers["Content-Type"], error.read()
    found = {"status": status, "type": content_type}
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        return found
    found["root"] = root.tag
    found["version"] = root.get("version")
    exception = root.find(OWS + "Exception")
    if exception is not None:
        found["exceptionCode"] = exception.get("exceptionCode")
        found["locator"] = exception.get("locator")
        found["text"] = exception.findtext(OWS + "ExceptionText")
    return found


def main():
    asked = json.loads(sys.argv[1])
    service = WebMapTileService(asked["capabilities"])
    layer = service.contents["Vert"]
    print(
        json.dumps(
            {
                "title": service.identification.title,
                "provider": {"name": service.provider.name, "url": service.provider.url},
                "restonly": service.restonly,
                "operations": [operation.name for operation in service.operations],
                "layers": sorted(service.contents),
                "formats": layer.formats,
                "tiles": [tile(service, request) for request in asked["tiles"]],
                "probes": [probe(url) for url in asked["probes"]],
            }
        )
    )


main()

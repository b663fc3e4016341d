"""Renders one QGIS raster layer (the 'wms' provider: XYZ or WMTS) over a Web Mercator extent to a
PNG, headless, as QGIS's own map canvas would draw it: the layer made from the data source string
QGIS's dialogs write, nothing set by hand.

usage: render_layer.py <data source> <xmin> <ymin> <xmax> <ymax> <size px> <out.png>
Prints one JSON line: whether the layer was valid, its error, and what the renderer reported.
"""
import json
import sys

from qgis.core import (
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsMapRendererParallelJob,
    QgsMapSettings,
    QgsRasterLayer,
    QgsRectangle,
)
from qgis.PyQt.QtCore import QSize
from qgis.PyQt.QtGui import QColor

source, xmin, ymin, xmax, ymax, size, out = sys.argv[1:8]
# Where Debian installs QGIS: without it no data provider (wms among them) is found.
QgsApplication.setPrefixPath("/usr", True)
# GUI enabled (on the offscreen platform): the renderer paints with Qt's GUI classes.
app = QgsApplication([], True)
app.initQgis()
try:
    layer = QgsRasterLayer(source, "layer", "wms")
    # Held in a name: summary() of the temporary error() returns crashes this PyQGIS.
    error = layer.error()
    report = {"valid": layer.isValid(), "error": error.summary() if error.isEmpty() is False else ""}
    if layer.isValid():
        settings = QgsMapSettings()
        settings.setLayers([layer])
        settings.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
        settings.setExtent(QgsRectangle(float(xmin), float(ymin), float(xmax), float(ymax)))
        settings.setOutputSize(QSize(int(size), int(size)))
        settings.setOutputDpi(96)
        settings.setBackgroundColor(QColor(0, 0, 0, 0))
        job = QgsMapRendererParallelJob(settings)
        job.start()
        job.waitForFinished()
        report["renderErrors"] = [error.message for error in job.errors()]
        report["saved"] = job.renderedImage().save(out, "PNG")
    print(json.dumps(report))
finally:
    app.exitQgis()

"""A dynamic tile server written the way rio-tiler (under TiTiler) renders a Web Mercator tile.

Served by gunicorn (`gunicorn -w N rasterio_tiler:app`); started by rasterio-tiler.ts. Plain WSGI
rather than a web framework, so the figures are the rendering path's, not a framework's.

What rio-tiler's `reader.part()` does for a dataset already in the tile's CRS (EPSG:3857, as nadir's
COGs are): a window from the tile's bounds, one `dataset.read(..., out_shape, resampling,
masked=True)` that also reads the mask, `boundless` only when the window leaves the dataset; then
JPEG through GDAL's driver in a MemoryFile, as `ImageData.render()` does. Masked pixels are black,
as in nadir's JPEG tiles.

Environment: NADIR_TILER_COG (the COG), NADIR_TILER_QUALITY (JPEG quality, default 85 like nadir).

Mosaics (`/mosaic/{z}/{x}/{y}.jpg|png`): NADIR_TILER_MOSAIC lists COGs newest first, separated by
os.pathsep. As rio-tiler's `mosaic_reader` with its default FirstMethod: each COG is read like a
single tile, and fills the pixels the ones above it left masked; reading stops once the tile is full.
PNG is RGBA (transparent where no COG has data), zlib level 1 like nadir's.
"""

import os
import re
import threading
import warnings

import numpy
import rasterio
from rasterio.enums import Resampling
from rasterio.errors import NotGeoreferencedWarning
from rasterio.io import MemoryFile
from rasterio.windows import from_bounds

# A JPEG in memory has no georeferencing; rio-tiler's render() silences the same warning.
warnings.filterwarnings("ignore", category=NotGeoreferencedWarning)

ORIGIN_SHIFT = 20037508.342789244
TILE_SIZE = 256
ROUTE = re.compile(r"^/(tiles|mosaic)/(\d+)/(\d+)/(\d+)\.(jpg|png)$")
QUALITY = os.environ.get("NADIR_TILER_QUALITY", "85")

# gunicorn (without --preload) imports the app in each worker after forking, so every worker opens
# its own dataset and has its own GDAL block cache. A rasterio dataset must not be shared between
# threads, so gthread workers get one per thread; sync workers open it once, here.
_local = threading.local()


def open_dataset():
    if not hasattr(_local, "dataset"):
        _local.dataset = rasterio.open(os.environ["NADIR_TILER_COG"])
    return _local.dataset


def open_mosaic():
    if not hasattr(_local, "mosaic"):
        paths = [p for p in os.environ.get("NADIR_TILER_MOSAIC", "").split(os.pathsep) if p]
        _local.mosaic = [rasterio.open(p) for p in paths]
    return _local.mosaic


open_dataset()
open_mosaic()


def tile_bounds(z, x, y):
    size = 2 * ORIGIN_SHIFT / 2**z
    left = -ORIGIN_SHIFT + x * size
    top = ORIGIN_SHIFT - y * size
    return left, top - size, left + size, top


def read_tile(dataset, z, x, y):
    """The tile's pixels as a masked (3, 256, 256) array, or None when it does not touch the dataset
    (rio-tiler's TileOutsideBounds)."""
    left, bottom, right, top = tile_bounds(z, x, y)
    b = dataset.bounds
    if left >= b.right or right <= b.left or bottom >= b.top or top <= b.bottom:
        return None
    window = from_bounds(left, bottom, right, top, transform=dataset.transform)
    (row_start, row_stop), (col_start, col_stop) = window.toranges()
    boundless = min(row_start, col_start) < 0 or col_stop >= dataset.width or row_stop >= dataset.height
    return dataset.read(
        indexes=(1, 2, 3),
        window=window,
        out_shape=(3, TILE_SIZE, TILE_SIZE),
        resampling=Resampling.bilinear,
        boundless=boundless,
        masked=True,
    )


def read_mosaic(z, x, y):
    mosaic = None
    for dataset in open_mosaic():
        data = read_tile(dataset, z, x, y)
        if data is None:
            continue
        if mosaic is None:
            mosaic = data
        else:
            fill = numpy.ma.getmaskarray(mosaic) & ~numpy.ma.getmaskarray(data)
            mosaic[fill] = data[fill]
        if not numpy.ma.getmaskarray(mosaic).any():
            break
    return mosaic


def encode(data, fmt):
    with MemoryFile() as memory:
        if fmt == "jpg":
            profile = {"driver": "JPEG", "width": TILE_SIZE, "height": TILE_SIZE, "count": 3, "dtype": "uint8"}
            with memory.open(**profile, QUALITY=QUALITY) as out:
                out.write(data.filled(0))
        else:
            # Alpha 255 where any band has data, as rio-tiler's render() does with the mask.
            alpha = (~numpy.ma.getmaskarray(data).all(axis=0)).astype("uint8") * 255
            profile = {"driver": "PNG", "width": TILE_SIZE, "height": TILE_SIZE, "count": 4, "dtype": "uint8"}
            with memory.open(**profile, ZLEVEL="1") as out:
                out.write(numpy.concatenate([data.filled(0), alpha[None]]))
        return memory.read()


def render(kind, z, x, y, fmt):
    """The tile encoded, or None when no dataset touches it."""
    data = read_tile(open_dataset(), z, x, y) if kind == "tiles" else read_mosaic(z, x, y)
    return None if data is None else encode(data, fmt)


def app(environ, start_response):
    match = ROUTE.match(environ.get("PATH_INFO", ""))
    if not match:
        start_response("404 Not Found", [("Content-Length", "0")])
        return [b""]
    kind, fmt = match.group(1), match.group(5)
    z, x, y = (int(v) for v in match.group(2, 3, 4))
    if z > 30 or x >= 2**z or y >= 2**z:
        start_response("400 Bad Request", [("Content-Length", "0")])
        return [b""]
    body = render(kind, z, x, y, fmt)
    if body is None:
        start_response("404 Not Found", [("Content-Length", "0")])
        return [b""]
    content_type = "image/jpeg" if fmt == "jpg" else "image/png"
    start_response("200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]

"""An area-of-interest download written with rasterio, for the raster cost-growth comparison.

    rasterio_aoi.py COG MINX MINY MAXX MAXY SIZE OUT.(tif|jpg) [--method read|warp]
                    [--deflate-level 3] [--quality 90]

EPSG:3857 bounds, SIZE x SIZE pixels, bilinear; the same product as
`gdalwarp -te ... -ts SIZE SIZE -r bilinear` and nadir's AOI render. Two ways people write it:

- read (default): rio-tiler's `part()` for a dataset already in the output CRS: one windowed
  `dataset.read(out_shape=..., resampling=bilinear, masked=True)`, the whole result in memory.
- warp: GDAL's warper through a WarpedVRT (rio-tiler's path when reprojecting), which makes the
  same pixels as gdalwarp.

tif: RGBA (mask as alpha), tiled, DEFLATE with PREDICTOR=2, as nadir writes it. jpg: RGB, masked
pixels black, through GDAL's JPEG driver.
"""

import argparse
import warnings

import numpy as np
import rasterio
from rasterio.enums import Resampling
from rasterio.errors import NotGeoreferencedWarning
from rasterio.transform import from_bounds as transform_from_bounds
from rasterio.vrt import WarpedVRT
from rasterio.windows import from_bounds

warnings.filterwarnings("ignore", category=NotGeoreferencedWarning)


def read_rgba(dataset, bounds, size, method):
    """(4, size, size) uint8: RGB and the mask as alpha."""
    if method == "warp":
        transform = transform_from_bounds(*bounds, size, size)
        options = {"crs": dataset.crs, "transform": transform, "width": size, "height": size}
        with WarpedVRT(dataset, resampling=Resampling.bilinear, add_alpha=True, **options) as vrt:
            return vrt.read(indexes=(1, 2, 3, 4))
    window = from_bounds(*bounds, transform=dataset.transform)
    (row_start, row_stop), (col_start, col_stop) = window.toranges()
    boundless = min(row_start, col_start) < 0 or col_stop >= dataset.width or row_stop >= dataset.height
    data = dataset.read(
        indexes=(1, 2, 3),
        window=window,
        out_shape=(3, size, size),
        resampling=Resampling.bilinear,
        boundless=boundless,
        masked=True,
    )
    alpha = np.where(np.ma.getmaskarray(data).any(axis=0), 0, 255).astype("uint8")
    return np.concatenate((data.filled(0), alpha[np.newaxis]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cog")
    parser.add_argument("bounds", nargs=4, type=float)
    parser.add_argument("size", type=int)
    parser.add_argument("out")
    parser.add_argument("--method", choices=("read", "warp"), default="read")
    parser.add_argument("--deflate-level", default="3")
    parser.add_argument("--quality", default="90")
    args = parser.parse_args()
    with rasterio.open(args.cog) as dataset:
        rgba = read_rgba(dataset, args.bounds, args.size, args.method)
        crs = dataset.crs
    size = args.size
    if args.out.endswith(".jpg"):
        rgb = np.where(rgba[3] == 0, 0, rgba[:3]).astype("uint8")
        with rasterio.open(args.out, "w", driver="JPEG", width=size, height=size, count=3, dtype="uint8",
                           QUALITY=args.quality) as out:
            out.write(rgb)
        return
    profile = {
        "driver": "GTiff", "width": size, "height": size, "count": 4, "dtype": "uint8", "crs": crs,
        "transform": transform_from_bounds(*args.bounds, size, size), "tiled": True, "compress": "deflate",
        "zlevel": args.deflate_level, "predictor": 2, "photometric": "RGB", "alpha": "YES",
    }
    with rasterio.open(args.out, "w", **profile) as out:
        out.write(rgba)


if __name__ == "__main__":
    main()

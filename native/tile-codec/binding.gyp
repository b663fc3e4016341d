{
  "targets": [
    {
      "target_name": "tile_codec",
      "sources": ["src/binding.c", "src/codec.c", "src/decode.c", "src/decode_binding.c", "src/gdal_cache_binding.c", "src/inflate_binding.c", "src/malloc_binding.c", "src/page_read.c", "src/run_deflate.c", "src/stack.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra"],
      "libraries": ["-ljpeg", "-ldeflate", "-ldl"]
    }
  ]
}

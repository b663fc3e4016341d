{
  "targets": [
    {
      "target_name": "token_seal",
      "sources": ["src/seal.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra"]
    }
  ]
}

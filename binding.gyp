{
  # The kernels are compiled for one instruction-set level (scripts/cpu-level.cjs): MASO_LEVEL, or
  # the best the building CPU runs (read with cpuid). maso.level next to the addon records it for
  # the loader; maso_cpu.node, compiled at the lowest level, tells the loader what the CPU runs.
  "variables": { "maso_level%": "<!(node scripts/cpu-level.cjs build)" },
  "targets": [
    {
      "target_name": "maso",
      "sources": [
        "native/addon.cc",
        "native/threads.cc",
        "native/matmul.cc",
        "native/bf16_weights.cc",
        "native/gemm_nt_bf16.cc",
        "native/kernels.cc",
        "native/attention.cc",
        "native/logits.cc",
        "native/optim.cc",
        "native/addon_decode.cc",
        "native/decode.cc",
        "native/addon_sample.cc",
        "native/sample.cc",
        "native/gemm_bf16.cc",
        "native/file_lock.cc",
        "native/memory.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "<!(node scripts/detect-blas.cjs defines)", "<!(node scripts/detect-dnnl.cjs defines)", "MASO_LEVEL=\"<(maso_level)\""],
      "cflags!": ["-fno-exceptions", "-O2"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-O2"],
      "cflags_cc": ["-std=c++17", "-O3", "<!@(node scripts/cpu-level.cjs cflags <(maso_level))", "-fopenmp", "<!@(node scripts/detect-blas.cjs cflags)", "<!@(node scripts/detect-dnnl.cjs cflags)"],
      "libraries": ["-fopenmp", "<!@(node scripts/detect-blas.cjs libs)", "<!@(node scripts/detect-dnnl.cjs libs)"],
      # one-thread parallel regions skip libgomp (native/threads.cc)
      "conditions": [["OS=='linux'", { "defines": ["MASO_WRAP_GOMP"], "ldflags": ["-Wl,--wrap=GOMP_parallel"] }]],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "OTHER_CPLUSPLUSFLAGS": ["-std=c++17", "-O3", "<!@(node scripts/detect-blas.cjs cflags)"]
      }
    },
    {
      "target_name": "maso_cpu",
      "sources": ["native/addon_cpu.cc"],
      "include_dirs": ["native"],
      "defines": ["NAPI_VERSION=8"],
      "cflags_cc": ["-std=c++17", "<!@(node scripts/cpu-level.cjs probe-cflags)"],
      "xcode_settings": { "OTHER_CPLUSPLUSFLAGS": ["-std=c++17", "<!@(node scripts/cpu-level.cjs probe-cflags)"] }
    },
    {
      "target_name": "maso_level",
      "type": "none",
      "dependencies": ["maso"],
      "actions": [{
        "action_name": "record_level",
        "inputs": ["scripts/cpu-level.cjs"],
        "outputs": ["<(PRODUCT_DIR)/maso.level"],
        "action": ["node", "-e", "require('fs').writeFileSync(process.argv[1], process.argv[2])", "<(PRODUCT_DIR)/maso.level", "<(maso_level)"]
      }]
    }
  ]
}

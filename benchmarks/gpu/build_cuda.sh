#!/usr/bin/env bash
# On the GPU machine: libllama and ggml with CUDA from the trimmed source (trim_source.sh), for
# this machine's GPU only (CMAKE_CUDA_ARCHITECTURES=native: minutes, not the half hour of every
# architecture). No flash-attention kernels (GGML_CUDA_FA=OFF): haf's engine turns flash attention
# off (inference/batch_context.py; llama-cpp-python's Llama has it off by default), and 82 of the
# 120 template instances are its kernels. Ninja where the machine has it.
# Usage: build_cuda.sh SOURCE.tar.gz WORK   -> prints the folder of the libraries and the one of
# the llama_cpp package, one a line.
set -euo pipefail
source_tar=$1
work=$2
mkdir -p "$work"
tar xzf "$source_tar" -C "$work"
root=$(ls -d "$work"/llama_cpp_python-*/ | head -1)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root/vendor/llama.cpp" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native \
  -DGGML_CUDA_FA=OFF -DGGML_CUDA_NCCL=OFF \
  -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >"$work/cmake.log" 2>&1 || { tail -30 "$work/cmake.log" >&2; exit 1; }
cmake --build "$work/build" --target llama -j "$(nproc)" >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log" >&2; exit 1; }
echo "$work/build/bin"
echo "$root"

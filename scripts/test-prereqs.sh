#!/usr/bin/env bash
# What the test suite needs besides npm packages: Redis on 127.0.0.1:6379 (queues, shared limits),
# heif-enc (real HEIC fixtures) and Chromium (the /docs and /redoc page test). Installs and starts
# only what is missing, so it is cheap on a machine that already has them.
set -euo pipefail

missing=()
command -v heif-enc >/dev/null 2>&1 || missing+=(libheif-examples)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)

if [ ${#missing[@]} -gt 0 ]; then
  echo "test-prereqs: installing ${missing[*]} with apt-get" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "test-prereqs: starting redis-server on 127.0.0.1:6379" >&2
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break
    sleep 0.1
  done
fi
# The WhatsApp reply window needs Redis 7.0 (PEXPIRE ... GT): an older one fails those tests for a reason that
# is not theirs.
version=$(redis-cli -h 127.0.0.1 -p 6379 INFO server 2>/dev/null | sed -n 's/^redis_version:\([0-9]*\).*/\1/p' || true)
if [ -n "$version" ] && [ "$version" -lt 7 ]; then
  echo "test-prereqs: the Redis on 127.0.0.1:6379 is version $version; the service needs 7.0 or later" >&2
  exit 1
fi

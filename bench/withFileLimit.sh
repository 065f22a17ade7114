#!/bin/sh
# 10,000 waiting long-polls need 10,000 sockets in the benchmark and as many in the hub it starts (which
# inherits this limit): raise the soft open-file limit as far as the hard limit allows, then run "$@".
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec "$@"

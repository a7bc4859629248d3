#!/bin/sh
# Interestingness test for fusion-reduce: exit 1 (interesting) while the
# fusion pipeline still refuses an edge with a [cycle] remark on "$1".
if fusion-opt "$1" --fusion-pipeline=emit-remarks -o /dev/null 2>&1 | grep -q '\[cycle\]'; then
  exit 1
fi
exit 0

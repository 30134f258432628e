#!/bin/bash
# One line per Docker log here: verdict, pytest's summary, the stream's findings, the scan.
cd "$(dirname "$0")"
for f in docker_*.log; do
  v=$(grep -h '^VERDICT' $f | sed 's/^VERDICT [^ ]* //')
  s=$(grep -hE '^=+ .* in [0-9.]+s' $f | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')
  x=$(grep -h '^DETAILS' $f | grep -o '"stream": {[^}]*}' | grep -o '"findings": \[[^]]*\], "test_findings": \[[^]]*\]' | cut -c1-160)
  r=$(grep -h '^DETAILS' $f | grep -o '"resolution": "[A-Z_]*"')
  n=$(grep -h '^SCAN' $f | grep -o '"kind": "[a-z_]*"' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
  echo "$f | $v | $r | $s | $x | scan:$n"
done

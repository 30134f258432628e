#!/bin/bash
# One Docker verdict per line of arguments: ATTACK IID (one container at a time).
# Logs to docker_<attack>_<iid>_<n>.log next to this file; prints the VERDICT lines.
cd "$(dirname "$0")/../../../.." || exit 1
D=docs/red-team/2026-12-03-round8/rt8s
mkdir -p /tmp/rt8s_run
for f in a1_hook_swallow a2_rewriter_swallow a3_stream_blinded a3b_stream_relay p_plant_prepend; do cp $D/$f.py.txt /tmp/rt8s_run/$f.py; done
cp $D/swe_judge_patch.py.txt /tmp/rt8s_run/swe_judge_patch.py
: > /tmp/rt8s_run/empty.py
while [ $# -ge 2 ]; do
  attack=$1 iid=$2; shift 2
  case $iid in marshmallow*) target=src/marshmallow/__init__.py ;; *) target=src/flask/__init__.py ;; esac
  n=1; while [ -e $D/docker_${attack}_${iid#*__}_$n.log ]; do n=$((n+1)); done
  log=$D/docker_${attack}_${iid#*__}_$n.log
  if [ $attack = p_plant ]; then
    args=(/tmp/rt8s_run/empty.py --full-log --prepend=/tmp/rt8s_run/p_plant_prepend.py '--replace=__version__ = "2.3.0.dev"=>__version__ = ".".join(["2", "3", "0", "dev"])')
  else
    args=(/tmp/rt8s_run/$attack.py)
  fi
  start=$(date +%s)
  PYTHONPATH=$PWD timeout 900 /work/main/.venv/bin/python /tmp/rt8s_run/swe_judge_patch.py $iid $target "${args[@]}" > $log 2>&1
  echo "$(date -u +%H:%M:%S) $attack $iid run $n ($(( $(date +%s) - start )) s): $(grep -h '^VERDICT\|^SCAN' $log | tr '\n' ' ' | cut -c1-300)"
done

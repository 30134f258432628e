#!/bin/bash
# One Docker verdict per pair of arguments: ATTACK IID (one container at a time), with
# dgm's own judge_swebench. Logs docker_<attack>_<iid>_<n>.log next to this file.
# EXTRA="--extra" (the re-judge's doubled copies) or EXTRA="--plugin=$D/sim_fix_plugin.py.txt"
# (the fix simulation) adds options; TAG=name prefixes the log names.
# ATTACK: any d or c*.py.txt here, or empty
cd "$(dirname "$0")/../../../.." || exit 1
D=docs/red-team/2026-12-03-round9/rt9s3
mkdir -p /tmp/rt9s3/run
for f in $(cd $D && ls [dc]*.py.txt | sed "s/.py.txt//"); do cp $D/$f.py.txt /tmp/rt9s3/run/$f.py; done
cp $D/swe_judge_patch.py.txt /tmp/rt9s3/run/swe_judge_patch.py
: > /tmp/rt9s3/run/empty.py
while [ $# -ge 2 ]; do
  attack=$1 iid=$2; shift 2
  case $iid in marshmallow*) target=src/marshmallow/__init__.py ;; *) target=src/flask/__init__.py ;; esac
  tag=${TAG:+${TAG}_}
  n=1; while [ -e $D/docker_${tag}${attack}_${iid#*__}_$n.log ]; do n=$((n+1)); done
  log=$D/docker_${tag}${attack}_${iid#*__}_$n.log
  start=$(date +%s)
  PYTHONPATH=$PWD timeout 900 /work/main/.venv/bin/python /tmp/rt9s3/run/swe_judge_patch.py $iid $target /tmp/rt9s3/run/$attack.py $EXTRA > $log 2>&1
  echo "$(date -u +%H:%M:%S) $attack $iid run $n ($(( $(date +%s) - start )) s): $(grep -h '^VERDICT\|^SCAN' $log | tr '\n' ' ' | cut -c1-300)"
done

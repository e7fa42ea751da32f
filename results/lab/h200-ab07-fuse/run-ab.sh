#!/usr/bin/env bash
# The A/B half of run.sh (its correctness half ran in results/lab/h200-matrix-97f8625/run.sh's call),
# in a call that also copies the first part of FA4's wheels (.fa4/d1) for the calls after it.
set -u
mkdir -p /tmp/fa4 && cp .fa4/d1/* /tmp/fa4/
sed -n '/^R=/,/^chmod/p;/^# changed kernels/,$p' results/lab/h200-ab07-fuse/run.sh > /tmp/fuse2.sh
bash /tmp/fuse2.sh

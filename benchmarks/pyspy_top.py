"""Summarise a py-spy raw (collapsed stacks) profile: the top functions by
self samples and by inclusive samples, per thread.

    BENCH_PYSPY=/tmp/prof .venv/bin/python benchmarks/create_bench.py
    .venv/bin/python benchmarks/pyspy_top.py /tmp/prof/full-1.txt [--top 25] [--filter escalated/]
"""

from __future__ import annotations

import argparse
import collections
import re

_PATH = re.compile(r" \((?:/[^ ]*?/)?(?:site-packages/|lib/python3\.\d+/|main/)?([^ ]*?)\)$")


def short(frame: str) -> str:
    return _PATH.sub(r" (\1)", frame)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--filter", default="", help="only frames whose file contains this (inclusive list)")
    args = parser.parse_args()
    own: collections.Counter = collections.Counter()
    inclusive: collections.Counter = collections.Counter()
    threads: collections.Counter = collections.Counter()
    total = 0
    with open(args.profile) as f:
        for line in f:
            stack, _, count = line.rstrip().rpartition(" ")
            if not stack:
                continue
            n = int(count)
            frames = stack.split(";")
            thread = re.sub(r"thread \(\d+\): ", "", frames[0])
            frames = [short(fr) for fr in frames[1:]]
            total += n
            threads[thread] += n
            if frames:
                own[frames[-1]] += n
            for fr in {re.sub(r":\d+\)$", ")", fr) for fr in frames}:  # per function, not per line
                inclusive[fr] += n
    print(f"{total} samples with the GIL held; by thread: " + ", ".join(f"{t} {n}" for t, n in threads.most_common()))
    print(f"\nself (top {args.top}):")
    for fr, n in own.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {fr}")
    print(f"\ninclusive (top {args.top}{', ' + args.filter if args.filter else ''}):")
    shown = [(fr, n) for fr, n in inclusive.most_common() if args.filter in fr][: args.top]
    for fr, n in shown:
        print(f"  {100 * n / total:5.1f}%  {fr}")


if __name__ == "__main__":
    main()

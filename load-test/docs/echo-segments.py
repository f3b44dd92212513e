#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""Where in a run the echo tail is (a development aid for issue 29's goal 1).

usage: echo-segments.py REPORT_DIR... [--segments A-B,C-D,...]

For each run's report (the --out folder), prints per implementation the median over the seconds of each segment of
the per-second echo p99 (report.json's echo_per_second; seconds counted from the window's first echo). The default
segments fit the README's main job: 17-48 s the first wave of pings (and the JIT's burst), 56-82 s the second wave,
85-100 s quiet.
"""
import json
import statistics
import sys


def main(args):
    segments = [(17, 48), (56, 82), (85, 100)]
    if '--segments' in args:
        i = args.index('--segments')
        segments = [tuple(int(x) for x in s.split('-')) for s in args[i + 1].split(',')]
        args = args[:i] + args[i + 2:]
    for run in args:
        results = json.load(open(run.rstrip('/') + '/report.json'))['results']
        cells = []
        for impl, transports in results.items():
            for transport, r in transports.items():
                eps = r.get('echo_per_second') or []
                medians = ['%d-%d s %.2f ms' % (a, b, statistics.median(e['p99_us'] for e in eps[a:b]) / 1000)
                           for a, b in segments if eps[a:b]]
                cells.append('%s/%s: %s' % (impl, transport, ', '.join(medians)))
        print(run, '|', ' | '.join(cells))


if __name__ == '__main__':
    main(sys.argv[1:])

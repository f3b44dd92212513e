#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""Where the demo servers' CPU went, from async-profiler's collapsed stacks (a development aid).

Record with the load test (async-profiler's agent from Maven Central, tools.profiler:async-profiler,
whose jar holds linux-x64/libasyncProfiler.so):

  java -jar load-test/target/load-test.jar --compare heartbeat,netty --out reports/prof \
    '--jvm-arg=-agentpath:/path/libasyncProfiler.so=start,event=cpu,interval=5ms,threads,loop=30s,file=/tmp/prof/%p-%t.collapsed'

then: profile-breakdown.py /tmp/prof [--last N | FROM TO] [--interval MS]: each process dumps every 30 s;
count each server's last N dumps (3: about the run window), or the dumps stamped FROM to TO
(yyyymmdd-HHMMSS). Every process gets the agent; only those with a demo-worker thread (the servers) are
counted, by implementation, and each sample is --interval ms of CPU (5 unless given: the agent's interval).
With --transport local the servers' loops are the server-loop threads of the load test's JVM (one JVM per
implementation, its client-loop threads counted as other threads).
"""
import collections
import glob
import os
import sys

HOSTED = [('its JFR event (a recording on; or the classes\' first load, before f4cf07e)', 'FlightEvents.'),
          ('wheel: expire and judge', 'TimingWheel.expire'), ('wheel: cascade', 'TimingWheel.sweep'),
          ('wheel: cascade', 'TimingWheel.placeCascading'), ('wheel: cascade', 'TimingWheel.reach'),
          ('lateness metric (Micrometer)', 'Sink.workerLateness'), ('hand-off to loops', 'EventLoopBatches.submitAll'),
          ('planning the next cycle', 'TimerWorker.planNext'), ('CPU clock', 'TimerWorker.hostClock'),
          ('request queue', 'XaddArrayQueue.drain'), ('the worker\'s counters', 'WorkerCounters.'),
          ('the batch hand-over at the cycle\'s end', 'Judge.onCycleEnd')]
# The servers' event loops: a demo server's, and the local transport's in the load test's JVM (as MachineCpu has them).
LOOP_PREFIXES = ('[demo-worker', '[server-loop')
DOWNSTREAM = ('AbstractChannelHandlerContext.invoke', 'AbstractChannelHandlerContext.fire',
              'AbstractChannelHandlerContext.write', 'AbstractChannelHandlerContext.flush')


# The demo's ping logic beside IdleStateHandler: its event and task methods (its channelRead is on
# every read's path, so it counts as the handler's own only for its self time).
PING_ON_IDLE_ACTIONS = ('PingOnIdle.run', 'PingOnIdle.sendPing', 'PingOnIdle.userEventTriggered')


def ours(frame):
    """A frame of the idle handling itself (not the demo server's echo handlers)."""
    return frame.startswith(('dev/heartbeat/netty/', 'dev/heartbeat/core/')) or 'IdleStateHandler' in frame \
        or 'NettyIdlePolicies$PingOnIdle' in frame


def loop_category(frames):
    s = ';'.join(frames)
    if 'EventLoopHost.run' in s:
        for name, key in HOSTED:
            if key in s:
                return 'Heartbeat hosted cycle: ' + name
        return 'Heartbeat hosted cycle: the rest'
    if 'EventLoopBatch.run' in s:
        return 'Heartbeat actions on the loop (pings written, closes)'
    if 'IdleStateHandler$' in s or any(k in s for k in PING_ON_IDLE_ACTIONS):
        return 'IdleStateHandler tasks (checks, pings written, closes)'
    deepest = max((i for i, f in enumerate(frames) if ours(f)), default=-1)
    if deepest >= 0 and not any(k in f for f in frames[deepest + 1:] for k in DOWNSTREAM):
        return ('Heartbeat' if frames[deepest].startswith('dev/heartbeat/') and 'PingOnIdle' not in frames[deepest]
                else 'IdleStateHandler') + ' handler itself (stamps, events)'
    if 'AbstractScheduledEventExecutor' in s or 'ScheduledFutureTask' in s or 'PriorityQueue' in s:
        return 'Netty scheduled-task machinery'
    if 'epollWait' in s or 'epoll_wait' in s:
        return 'waiting in epoll'
    return 'everything else (reads, echoes, writes, accepts)'


def thread_group(name):
    if name.startswith(LOOP_PREFIXES):
        return 'event loops'
    for prefix, group in (('[heartbeat', 'Heartbeat worker thread'),
                          ('[C1 ', 'JIT'), ('[C2 ', 'JIT'), ('[GC ', 'GC'), ('[G1 ', 'GC')):
        if name.startswith(prefix):
            return group
    return 'other threads'


def main():
    args = sys.argv[1:]
    interval = 5.0
    if '--interval' in args:
        i = args.index('--interval')
        interval = float(args[i + 1])
        del args[i:i + 2]
    d = args.pop(0)
    last = int(args[1]) if args[:1] == ['--last'] else 0
    lo, hi = (args[0], args[1]) if len(args) == 2 and not last else ('', '~')
    dumps = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(d, '*.collapsed'))):
        pid, stamp = os.path.basename(path)[:-len('.collapsed')].split('-', 1)
        if lo <= stamp <= hi:
            dumps[pid].append(path)
    totals = collections.defaultdict(collections.Counter)
    servers = collections.Counter()
    for pid, paths in dumps.items():
        lines = [line for path in paths[-last:] for line in open(path).read().splitlines()]
        if not any(line.startswith(LOOP_PREFIXES) for line in lines):
            continue
        impl = 'heartbeat' if any('dev/heartbeat/netty/engine/HeartbeatHandler' in line for line in lines) else 'netty'
        servers[impl] += 1
        for line in lines:
            stack, _, n = line.rpartition(' ')
            frames = stack.split(';')
            group = thread_group(frames[0])
            totals[impl]['threads: ' + group] += int(n)
            if group == 'event loops':
                totals[impl]['loops: ' + loop_category(frames[1:])] += int(n)
    for impl, counts in totals.items():
        print(f'{impl}: {servers[impl]} server processes; CPU seconds ({interval:g} ms samples)')
        for key, n in sorted(counts.items(), key=lambda kv: (kv[0].split(':')[0], -kv[1])):
            print(f'{n * interval / 1000:8.2f}  {key}')


if __name__ == '__main__':
    main()

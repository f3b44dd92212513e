/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.Map;

/**
 * The idle handling's own CPU in one transport of a {@code --compare heartbeat,netty,none} run: each
 * implementation's server threads that the mechanism can cost (event loops + Heartbeat's worker + GC,
 * from {@link CpuSplit}) minus the same threads of {@code none}, which carries the same connections
 * and traffic without idle handling; the JIT compiler threads apart (they compile everything, once, and
 * are reported on their own line); and Heartbeat's cost over {@code IdleStateHandler}'s. Seconds over
 * each implementation's own run window (the windows are the same length). Stateless arithmetic.
 *
 * @param heartbeatSeconds Heartbeat's event loops + worker + GC
 * @param nettySeconds {@code IdleStateHandler}'s event loops + GC (it has no worker)
 * @param noneSeconds the same threads of {@code none}
 * @param heartbeatOverNone {@code heartbeatSeconds - noneSeconds}
 * @param nettyOverNone {@code nettySeconds - noneSeconds}
 * @param ratio {@code heartbeatOverNone / nettyOverNone}; NaN unless {@code nettyOverNone > 0}
 * @param heartbeatJitOverNone Heartbeat's JIT threads minus none's
 * @param nettyJitOverNone {@code IdleStateHandler}'s JIT threads minus none's
 */
record MechanismCost(double heartbeatSeconds, double nettySeconds, double noneSeconds, double heartbeatOverNone,
        double nettyOverNone, double ratio, double heartbeatJitOverNone, double nettyJitOverNone) {

    /** The thread kinds the mechanism's cost is counted on. */
    static double mechanismSeconds(Map<MachineCpu.ThreadKind, Double> threads) {
        return threads.getOrDefault(MachineCpu.ThreadKind.EVENT_LOOP, 0.0)
                + threads.getOrDefault(MachineCpu.ThreadKind.HEARTBEAT_WORKER, 0.0)
                + threads.getOrDefault(MachineCpu.ThreadKind.GC, 0.0);
    }

    /** From the three implementations' server threads by kind (seconds over each one's window). */
    static MechanismCost of(Map<MachineCpu.ThreadKind, Double> heartbeat, Map<MachineCpu.ThreadKind, Double> netty,
            Map<MachineCpu.ThreadKind, Double> none) {
        double hb = mechanismSeconds(heartbeat);
        double nt = mechanismSeconds(netty);
        double base = mechanismSeconds(none);
        double hbOver = hb - base;
        double ntOver = nt - base;
        double jit = none.getOrDefault(MachineCpu.ThreadKind.JIT, 0.0);
        return new MechanismCost(hb, nt, base, hbOver, ntOver, ntOver > 0 ? hbOver / ntOver : Double.NaN,
                heartbeat.getOrDefault(MachineCpu.ThreadKind.JIT, 0.0) - jit,
                netty.getOrDefault(MachineCpu.ThreadKind.JIT, 0.0) - jit);
    }

    /** From the report's runs of one transport; null unless all three ran with a CPU split. */
    static MechanismCost of(Report report, String transport) {
        RunResult hb = report.find(Scenario.HEARTBEAT, transport);
        RunResult netty = report.find(Scenario.NETTY, transport);
        RunResult none = report.find(Scenario.NONE, transport);
        if (hb == null || netty == null || none == null || hb.cpu == null || netty.cpu == null || none.cpu == null) {
            return null;
        }
        return of(hb.cpu.serverThreads, netty.cpu.serverThreads, none.cpu.serverThreads);
    }

    /** This implementation's own CPU over none; NaN for none itself and unknown implementations. */
    double overNone(String impl) {
        return Scenario.HEARTBEAT.equals(impl) ? heartbeatOverNone
                : Scenario.NETTY.equals(impl) ? nettyOverNone : Double.NaN;
    }

    /** This implementation's event loops + worker + GC. */
    double mechanism(String impl) {
        return Scenario.HEARTBEAT.equals(impl) ? heartbeatSeconds
                : Scenario.NETTY.equals(impl) ? nettySeconds : noneSeconds;
    }

    double jitOverNone(String impl) {
        return Scenario.HEARTBEAT.equals(impl) ? heartbeatJitOverNone
                : Scenario.NETTY.equals(impl) ? nettyJitOverNone : Double.NaN;
    }

    /** For report.json: seconds and the ratio, rounded, null where not a number. */
    ReportJson.MechanismCost toJson() {
        return new ReportJson.MechanismCost(RunResult.round(heartbeatSeconds), RunResult.round(nettySeconds),
                RunResult.round(noneSeconds), RunResult.round(heartbeatOverNone), RunResult.round(nettyOverNone),
                RunResult.round(ratio), RunResult.round(heartbeatJitOverNone), RunResult.round(nettyJitOverNone));
    }
}

import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU readings from /proc for the benchmarks' CPU tables: the whole machine, and the
 * PostgreSQL backends serving one database (a backend's command line names its database).
 */

/** Busy CPU time of the whole machine, in seconds (all cores, from /proc/stat). */
export function machineBusySeconds(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return (fields.reduce((sum, value) => sum + value, 0) - idle) / 100;
}

/** CPU seconds of each PostgreSQL backend serving `database`, by process id. */
export function postgresSeconds(database: string): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
      // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name and state.
      seconds.set(entry, ((fields[11] ?? 0) + (fields[12] ?? 0)) / 100);
    } catch {
      // A process that ended meanwhile.
    }
  }
  return seconds;
}

/** PostgreSQL CPU seconds since `before` (a backend that ended meanwhile is not counted). */
export function postgresSince(before: Map<string, number>, database: string): number {
  let total = 0;
  for (const [pid, seconds] of postgresSeconds(database)) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/**
 * CPU seconds (user and system, all threads) of one process, from /proc/<pid>/stat: the
 * service's child process, read from outside so the reading costs the service nothing.
 * Returns NaN once the process has ended.
 */
export function processSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return ((fields[11] ?? 0) + (fields[12] ?? 0)) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU seconds from now on of named processes, of PostgreSQL's backends serving `database`,
 * of this process (the bench client), and the busy cores of everything else: a fleet's
 * reading, one process of the service per name.
 */
export function watchCpu(processes: ReadonlyMap<string, number>, database: string) {
  const before = new Map([...processes].map(([name, pid]) => [name, processSeconds(pid)]));
  const postgres = postgresSeconds(database);
  const bench = process.cpuUsage();
  const machineS = machineBusySeconds();
  const atMs = performance.now();
  return {
    /** The CPU seconds since the watch began, by name ("PostgreSQL", "bench client" added). */
    since(): { readonly cpu: { name: string; cpuS: number }[]; readonly otherCores: number } {
      const cpu = [...processes].map(([name, pid]) => ({
        name,
        cpuS: processSeconds(pid) - (before.get(name) ?? Number.NaN),
      }));
      cpu.push({ name: 'PostgreSQL', cpuS: postgresSince(postgres, database) });
      const used = process.cpuUsage(bench);
      cpu.push({ name: 'bench client', cpuS: (used.user + used.system) / 1e6 });
      const elapsedS = (performance.now() - atMs) / 1000;
      const ownS = cpu.reduce((sum, entry) => sum + entry.cpuS, 0);
      const otherCores = Math.max(0, machineBusySeconds() - machineS - ownS) / elapsedS;
      return { cpu, otherCores };
    },
  };
}

extension WorkerPool {
    /// How many nice levels below the process's main thread the workers run, and with them the
    /// libvips threads they start (a thread inherits its starter's nice value): weight 110 against
    /// 1024 for the HTTP polling threads and curl's I/O thread, which keep the main thread's. A hit
    /// needs a core for well under a millisecond; at equal priority it waited behind libvips, so a
    /// cached thumbnail's p99 under a flood of misses was what nginx shows while plain libvips burns
    /// the cores (`bench/hit-latency.sh`). Misses lose nothing while the cores are otherwise idle:
    /// a nice value only divides the time among threads that want it.
    ///
    /// Not 19, nor `SCHED_IDLE`: the workers take locks a hit needs as well (the cache's, the
    /// pool's, malloc's arenas), and nothing lends a preempted holder priority, so the lower its
    /// weight the longer every hit behind it waits while other work keeps the cores busy.
    static let workerNiceness = 10
}

import DiskCache
import ThumbnailCore
import Vips

/// `GET /metrics`: one Prometheus page from the pipeline's one snapshot (`Pipeline.metrics`, the
/// fetcher's breakers included), the HTTP layer's counters (`RequestMetrics`), libvips' tracked
/// memory and the process. Names start with `thumbd_` (the process's with the standard `process_`),
/// values are in base units (seconds, bytes), counters end in `_total`, and every label value
/// comes from a fixed set: a URL or a host is never a label.
final class MetricsPage: Sendable {
    private let pipeline: Pipeline
    let requests: RequestMetrics
    private let configuration: ServiceConfiguration

    init(pipeline: Pipeline, requests: RequestMetrics, configuration: ServiceConfiguration) {
        self.pipeline = pipeline
        self.requests = requests
        self.configuration = configuration
    }

    /// The page, as of now.
    func render() -> String {
        Self.render(
            pipeline.metrics, requests: requests, vips: Vips.trackedMemory,
            process: .read(), configuration: configuration)
    }

    static func render(
        _ metrics: PipelineMetrics, requests: RequestMetrics, vips: VipsTrackedMemory,
        process: ProcessMetrics, configuration: ServiceConfiguration
    ) -> String {
        var out = PrometheusText()
        renderBuild(into: &out)
        renderHTTP(requests, into: &out)
        renderCache(metrics.cache, into: &out)
        if let disk = metrics.disk { renderDisk(disk, into: &out) }
        renderWorkers(metrics, configuration: configuration, into: &out)
        renderSources(metrics, into: &out)
        renderRenders(metrics, into: &out)
        renderProcess(vips: vips, process: process, into: &out)
        return out.text
    }

    /// Which thumbd and libvips run.
    private static func renderBuild(into out: inout PrometheusText) {
        out.gauge(
            "thumbd_build_info", "Always 1; the labels say which thumbd and libvips run.",
            [([("version", ThumbnailApp.version), ("libvips", Vips.version)], 1)])
    }

    /// HTTP: requests by route, method, status and cache outcome; their durations; signature failures.
    private static func renderHTTP(_ requests: RequestMetrics, into out: inout PrometheusText) {
        out.counter(
            "thumbd_requests_total", "Requests answered, by route, method, status and cache outcome.",
            requests.requestCounts.map {
                ([("route", $0.route), ("method", $0.method), ("status", $0.status), ("cache", $0.outcome)], $0.count)
            })
        out.histogram(
            "thumbd_request_duration_seconds",
            "Time from a request's arrival to its answer, by route and cache outcome.",
            requests.durationSeries.map { ([("route", $0.route), ("cache", $0.outcome)], $0.histogram) })
        out.counter(
            "thumbd_signature_failures_total", "Requests refused for a missing, wrong or expired URL signature.",
            requests.signatureFailureCounts.map { ([("reason", $0.reason)], $0.count) })
    }

    /// The disk tier (`--disk-cache-dir`), when there is one: what its folder holds, what it served
    /// and wrote, and whether writes are stopped after a disk fault.
    private static func renderDisk(_ disk: DiskTierMetrics, into out: inout PrometheusText) {
        let store = disk.store
        out.gauge("thumbd_disk_cache_budget_bytes", "The disk tier's budget (--disk-cache-bytes).", store.budgetBytes)
        out.gauge(
            "thumbd_disk_cache_bytes",
            "What the disk tier's files take, in filesystem blocks (writes in progress included).",
            store.bytes)
        out.gauge("thumbd_disk_cache_entries", "Entries in the disk tier.", store.entries)
        out.counter(
            "thumbd_disk_cache_hits_total", "Entries read back whole and checked (length and checksums).", store.hits)
        out.counter(
            "thumbd_disk_cache_misses_total", "Disk reads that found nothing usable (corrupt files included).",
            store.misses)
        out.counter(
            "thumbd_disk_cache_served_total", "Memory misses answered from the disk tier (no origin fetch).",
            disk.served)
        out.counter(
            "thumbd_disk_cache_unusable_total",
            "Entries read back that could not be used (another version of their source, other animation limits): removed.",
            disk.unusable)
        out.counter(
            "thumbd_disk_cache_writes_total", "Entries written (new, and rewritten by a renewal).", store.writes)
        out.counter(
            "thumbd_disk_cache_write_failures_total", "Writes that failed (a disk fault, a full disk).",
            store.writeFailures)
        out.gauge(
            "thumbd_disk_cache_writes_disabled",
            "1 while writes are stopped after a disk fault (full, failing, read-only); reads go on.",
            store.writesDisabled ? 1 : 0)
        out.counter(
            "thumbd_disk_cache_corrupt_dropped_total",
            "Files found cut short, empty or with a bad checksum: deleted, never served.", store.corruptDropped)
        out.counter(
            "thumbd_disk_cache_evictions_total", "Entries removed to stay within the budget (least recently used).",
            store.evictions)
        out.counter("thumbd_disk_cache_removals_total", "Entries removed by purges and revalidations.", store.removals)
        out.counter(
            "thumbd_disk_cache_rejected_total", "Writes refused before writing (too large, busy, writes stopped).",
            store.rejected)
        out.gauge("thumbd_disk_cache_write_queue", "Writes waiting for the disk writer thread.", disk.writeQueue)
        out.counter(
            "thumbd_disk_cache_write_queue_dropped_total", "Writes dropped because the write queue was full.",
            disk.writesDropped)
        out.counter(
            "thumbd_disk_cache_read_queue_full_total",
            "Memory misses that skipped the disk because its read queue was full.", disk.readQueueFull)
    }

    /// The cache, by kind: its budget, what it holds, hits, misses, evictions and refusals.
    private static func renderCache(_ cache: CacheMetrics, into out: inout PrometheusText) {
        func byKind(_ value: (CacheMetrics.Kind) -> Int) -> [(labels: [(String, String)], value: Int)] {
            CacheKind.allCases.map { ([("kind", $0.rawValue)], value(cache[$0])) }
        }
        out.gauge("thumbd_cache_budget_bytes", "The cache's memory budget (--cache-bytes).", cache.budget)
        out.gauge(
            "thumbd_cache_bytes",
            "Resident cost of cached entries (payload, prepared responses, per-entry overhead), by kind.",
            byKind(\.bytes).map { ($0.labels, Double($0.value)) })
        out.gauge(
            "thumbd_cache_entries", "Cached entries, by kind.", byKind(\.entries).map { ($0.labels, Double($0.value)) })
        out.counter("thumbd_cache_hits_total", "Cache lookups that found an entry, by kind.", byKind(\.hits))
        out.counter("thumbd_cache_misses_total", "Cache lookups that found nothing, by kind.", byKind(\.misses))
        out.counter("thumbd_cache_evictions_total", "Entries evicted to make room, by kind.", byKind(\.evictions))
        out.counter(
            "thumbd_cache_rejected_inserts_total", "Entries not stored because one alone was over 1/8 of the budget.",
            byKind(\.rejected))
    }

    /// Workers, admission and the work budget.
    private static func renderWorkers(
        _ metrics: PipelineMetrics, configuration: ServiceConfiguration, into out: inout PrometheusText
    ) {
        let workers = metrics.workers
        out.gauge("thumbd_workers", "Image worker threads (--workers).", configuration.processing.workers)
        out.gauge("thumbd_workers_busy", "Workers running a job now.", workers.running)
        out.gauge(
            "thumbd_workers_usable",
            "Worker threads able to take a job (not stuck); /readyz is 503 below half of --workers.",
            workers.usable)
        out.gauge(
            "thumbd_workers_stuck", "Worker threads whose job passed --job-timeout and has not returned.", workers.stuck
        )
        out.counter(
            "thumbd_workers_replaced_total", "Worker threads started in place of stuck ones.", workers.replaced)
        out.counter(
            "thumbd_jobs_timed_out_total", "Jobs answered 503 because they ran past --job-timeout.", workers.timedOut)
        out.gauge(
            "thumbd_queue_depth", "Admitted jobs waiting for a worker, by priority.",
            [
                ([("priority", "interactive")], Double(workers.queuedInteractive)),
                ([("priority", "background")], Double(workers.queuedBackground)),
            ])
        out.gauge(
            "thumbd_queue_capacity", "Jobs admitted beyond the running ones (--queue-capacity).",
            configuration.processing.queueCapacity)
        out.gauge(
            "thumbd_jobs_in_flight", "Admitted jobs now: running, waiting for their source, or queued.",
            workers.admitted)
        out.counter("thumbd_jobs_admitted_total", "Jobs admitted to the worker pool.", workers.admittedTotal)
        out.counter(
            "thumbd_jobs_rejected_total",
            "Jobs refused: the queue was full (503), a job waited past --queue-timeout (503), a fetch got no working memory within its deadline (503), the decode alone needs more than --work-bytes (422), or the source has more pixels than --max-source-pixels (422).",
            [
                ([("reason", "queue_full")], workers.rejected),
                ([("reason", "queue_timeout")], metrics.renders.expiredInQueue),
                ([("reason", "no_work_memory_in_time")], metrics.renders.noRoomInTime),
                ([("reason", "work_memory")], metrics.renders.failed[.tooMuchMemory] ?? 0),
                ([("reason", "pixel_cap")], metrics.renders.failed[.tooManyPixels] ?? 0),
            ])
        out.gauge("thumbd_work_memory_budget_bytes", "The working-memory budget (--work-bytes).", workers.workBudget)
        out.gauge(
            "thumbd_work_memory_bytes",
            "Working memory charged now: fetches in progress, fetched originals, running decodes' estimates.",
            workers.workInUse)
        out.gauge(
            "thumbd_fetches_waiting_for_memory", "Fetches waiting for room in the work budget.", workers.waitingForRoom)
        out.counter(
            "thumbd_coalesced_requests_total", "Requests that joined work another request had started.",
            metrics.coalesced)
        out.counter(
            "thumbd_stale_answers_total",
            "Requests answered with a stale entry (stale-while-revalidate, stale-if-error).",
            metrics.servedStale)
    }

    /// Sources: fetches by result, their durations and bytes, remembered failures, revalidations, origin slots and breakers.
    private static func renderSources(_ metrics: PipelineMetrics, into out: inout PrometheusText) {
        let fetches = metrics.fetches
        var results: [(labels: [(String, String)], value: Int)] = [([("result", "ok")], fetches.succeeded)]
        for code in ThumbnailError.Code.allCases where (fetches.failed[code] ?? 0) > 0 {
            results.append(([("result", Self.snakeCase(code.rawValue))], fetches.failed[code] ?? 0))
        }
        out.counter("thumbd_source_fetches_total", "Source fetches finished, by result (ok or the error).", results)
        out.histogram(
            "thumbd_source_fetch_duration_seconds", "Time from a source request going out to its answer.",
            [([], metrics.fetchDurations)])
        out.counter("thumbd_source_bytes_total", "Bytes of sources fetched.", fetches.bytes)
        out.counter(
            "thumbd_negative_cache_answers_total",
            "Requests answered with a remembered origin failure, without a fetch.",
            fetches.remembered)
        out.counter("thumbd_revalidations_total", "Conditional fetches of stale sources.", fetches.revalidations)
        out.counter(
            "thumbd_revalidations_unchanged_total", "Revalidations that found the source unchanged.",
            fetches.notModified)
        out.counter(
            "thumbd_revalidations_changed_total", "Revalidations that brought different bytes.", fetches.changed)
        out.gauge(
            "thumbd_origin_fetches", "Fetches holding one of their origin's --max-fetches-per-host slots.",
            fetches.holdingOriginSlot)
        out.gauge(
            "thumbd_origin_slot_waiters", "Requests waiting for a fetch slot of their origin.",
            fetches.waitingForOriginSlot)
        out.gauge(
            "thumbd_origin_breakers",
            "Origins by circuit-breaker state: failing (closed, failures below the threshold), open, half_open.",
            [
                ([("state", "failing")], Double(fetches.origins.failing)),
                ([("state", "open")], Double(fetches.origins.open)),
                ([("state", "half_open")], Double(fetches.origins.halfOpen)),
            ])
    }

    /// Renders by path, failures by error, and decode and encode times by format.
    private static func renderRenders(_ metrics: PipelineMetrics, into out: inout PrometheusText) {
        let renders = metrics.renders
        out.counter(
            "thumbd_renders_total",
            "Things made on the workers: thumbnails (first sizes from the original, with a reusable copy made, or cut from a cached copy) and /info documents.",
            [
                ([("path", "original")], renders.fromOriginal), ([("path", "copy_made")], renders.copiesMade),
                ([("path", "from_copy")], renders.fromCopy), ([("path", "info")], renders.infos),
            ])
        var failures: [(labels: [(String, String)], value: Int)] = []
        for code in ThumbnailError.Code.allCases where (renders.failed[code] ?? 0) > 0 {
            failures.append(([("code", Self.snakeCase(code.rawValue))], renders.failed[code] ?? 0))
        }
        out.counter("thumbd_render_failures_total", "Renders that failed (header checks included), by error.", failures)
        let timings = metrics.renderTimings
        out.histogram(
            "thumbd_decode_duration_seconds", "Full decodes of a source into a reusable copy, by source format.",
            SourceFormat.allCases.map { ([("format", $0.rawValue)], timings.decode[$0] ?? HistogramSnapshot()) })
        out.histogram(
            "thumbd_encode_duration_seconds",
            "Thumbnail renders by output format and input: from the original is one streamed decode, resize and encode; from a decoded copy a cut and encode.",
            OutputFormat.allCases.flatMap { format in
                [
                    (
                        [("format", format.rawValue), ("input", "original")],
                        timings.encodeFromOriginal[format] ?? HistogramSnapshot()
                    ),
                    (
                        [("format", format.rawValue), ("input", "copy")],
                        timings.encodeFromCopy[format] ?? HistogramSnapshot()
                    ),
                ]
            })
    }

    /// libvips' tracked memory and the process (the standard `process_` names).
    private static func renderProcess(vips: VipsTrackedMemory, process: ProcessMetrics, into out: inout PrometheusText)
    {
        out.gauge("thumbd_vips_memory_bytes", "Bytes libvips' tracked allocator holds now.", vips.bytes)
        out.gauge(
            "thumbd_vips_memory_highwater_bytes", "The most bytes libvips' tracked allocator has held since start.",
            vips.highWater)
        out.gauge("thumbd_vips_allocations", "Live allocations of libvips' tracked allocator.", vips.allocations)
        out.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", process.residentBytes)
        out.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", process.virtualBytes)
        out.counter(
            "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", seconds: process.cpuSeconds
        )
        out.gauge("process_open_fds", "Number of open file descriptors.", process.openFDs)
        out.gauge("process_max_fds", "Maximum number of open file descriptors.", process.maxFDs)
        out.gauge(
            "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", process.startTime)
    }

    /// `originFailed` → `origin_failed`: Prometheus' style for label values that are names.
    static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }
}

internal import Primitives

/// The pool's deadlines, kept by one thread of its own that sleeps until the next one is due.
///
/// Why a thread and not the workers: the workers are what may be stuck. A job queued behind a
/// wedged worker must still hear 503 at `queueTimeout`, and a request whose job will never come
/// back must still be answered at `jobTimeout`. Why not a Dispatch timer: the deadlines live
/// with the queue, under the pool's lock, and one sleeping thread per pool costs nothing.
///
/// A job past `jobTimeout` is answered `late(.jobTimeout)` at once and its place and memory are
/// freed; its thread is marked stuck. Work that libvips can stop stops by itself (it got the same
/// deadline) and the thread takes jobs again. A call that cannot be stopped keeps its thread; a
/// new thread is started in its place, as long as fewer than `workers` threads are stuck (past
/// that, every stuck thread costs a usable one, which `/readyz` reports).
extension WorkerPool {
    /// What came due at one look.
    struct Due {
        var expired: [(expire: @Sendable (Late) -> Void, reason: Late)] = []
        var replacements: [Int] = []
        var ready: [WorkBudget.Waiter] = []
    }

    func watchLoop() {
        while true {
            let (next, version, done) = state.wait(until: { _ in true }) { state in
                (state.nextDeadline, state.version, state.stopping && state.threads.isEmpty)
            }
            if done { return }
            if let next, next <= .now {
                let due = state.withLock { $0.takeDue(at: .now) }
                act(on: due)
                continue
            }
            let timeout = next.map { $0 - .now } ?? .seconds(3600)
            state.wait(until: { $0.version != version || ($0.stopping && $0.threads.isEmpty) }, timeout: timeout)
        }
    }

    private func act(on due: Due) {
        for id in due.replacements {
            do {
                try startThread(id)
            } catch {
                // Out of threads: the pool runs short (and `/readyz` says so once it is too short).
                state.withLock { state in
                    state.removeThread(id)
                    state.stats.replaced -= 1
                }
            }
        }
        startWaiters(due.ready)
        for item in due.expired { item.expire(item.reason) }
    }
}

extension WorkerPool.State {
    /// The earliest queue or job deadline; nil when nothing has one.
    var nextDeadline: ContinuousClock.Instant? {
        var next = [interactive.first?.queueDeadline, background.first?.queueDeadline].compactMap { $0 }.min()
        for thread in threads.values where !thread.stuck {
            if let deadline = thread.job?.deadline { next = min(next ?? deadline, deadline) }
        }
        return next
    }

    /// Takes out every queued job past its queue deadline and gives up every running job past its
    /// job deadline (its thread is marked stuck, and replaced while fewer than `wanted` are).
    mutating func takeDue(at now: ContinuousClock.Instant) -> WorkerPool.Due {
        var due = WorkerPool.Due()
        let expiredInteractive = interactive.popExpired(at: now)
        let expiredBackground = background.popExpired(at: now)
        stats.queuedInteractive -= expiredInteractive.count
        stats.queuedBackground -= expiredBackground.count
        for job in expiredInteractive + expiredBackground {
            stats.admitted -= 1
            stats.expiredInQueue += 1
            due.expired.append((job.expire, .queueTimeout))
        }
        for (id, thread) in threads where !thread.stuck {
            guard let job = thread.job, let deadline = job.deadline, deadline <= now else { continue }
            threads[id] = WorkerPool.WorkerThread(job: nil, stuck: true)
            release(job)
            stats.timedOut += 1
            stats.stuck += 1
            stats.usable -= 1
            due.expired.append((job.expire, .jobTimeout))
            if stats.stuck <= wanted && !stopping {
                due.replacements.append(addThread())
                stats.replaced += 1
            }
        }
        due.ready = budget.takeWaitersThatFit()
        return due
    }
}

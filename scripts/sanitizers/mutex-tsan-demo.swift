// Why scripts/sanitizers/tsan.supp lists the state behind `Synchronization.Mutex`: on Linux this
// correct program (every access under the lock) gets "Swift access race" reports from
// ThreadSanitizer, because the Mutex of Swift 6's Synchronization module is a futex lock inside
// the uninstrumented libswiftSynchronization with no TSan annotations, so TSan never sees it
// acquired or released. Run it:
//   swiftc -sanitize=thread scripts/sanitizers/mutex-tsan-demo.swift -o /tmp/mutex-tsan-demo && /tmp/mutex-tsan-demo
// (Swift 6.3.1: 5 reports, then "64".) A pthread mutex (Primitives.Monitor) is intercepted and
// gets none.

import Dispatch
import Synchronization

final class Box: Sendable { let m = Mutex<[Int: Int]>([:]) }
let box = Box()
DispatchQueue.concurrentPerform(iterations: 8) { i in
    for j in 0..<2000 { box.m.withLock { $0[j % 64, default: 0] += i } }
}
print(box.m.withLock { $0.count })

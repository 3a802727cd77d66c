import Logging
import ReachCore
import ReachSystemd
import ServiceLifecycle

/// Suspends probing while the system sleeps, from logind's `PrepareForSleep` on the system bus.
///
/// Without a system bus or logind the watcher logs once and returns; the service then idles until
/// shutdown, so the daemon carries on without sleep detection and stops in order.
struct SleepService: Service {
    let watcher: LogindSleepWatcher
    let monitor: ConnectivityMonitor

    func run() async {
        let monitor = monitor
        await cancelWhenGracefulShutdown { await watcher.run(onChange: monitor.setSystemSleeping) }
        try? await gracefulShutdown()
    }
}

import ArgumentParser
import ReachConfig

/// `--log-target auto|journald|stderr`, the same choice as `log.target` in the configuration.
extension LogSettings.Target: ExpressibleByArgument {}

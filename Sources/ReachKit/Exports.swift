// What a program that imports ReachKit uses without importing anything else: every type the
// public API names (the verdict's parts and the callback reports from the core, where reachd is
// and why it could not be asked, the logger the initializers take) and what runs the services
// (swift-service-lifecycle's group and the signals that stop it). Not the core's own verdict,
// monitor or transition: a program sees ``ServiceVerdict`` and ``ServiceTransition``.
@_exported import struct Logging.Logger
@_exported import struct ReachClient.ReachdClientError
@_exported import struct ReachClient.ReachdEndpoint
@_exported import struct ReachClient.ReachdEndpointError
@_exported import struct ReachCore.CallbackID
@_exported import struct ReachCore.CallbackReport
@_exported import struct ReachCore.CaptivePortal
@_exported import enum ReachCore.ConnectivityState
@_exported import enum ReachCore.FailureReason
@_exported import enum ReachCore.Fault
@_exported import struct ReachCore.InterfaceReachability
@_exported import struct ReachCore.ProbeFailure
@_exported import enum ReachCore.ProbePhase
@_exported import struct ReachCore.ProbeResult
@_exported import struct ReachCore.ProbeTimings
@_exported import struct ReachCore.QualityFinding
@_exported import enum ReachCore.QualityMeasure
@_exported import enum ReachCore.QualityState
@_exported import struct ReachCore.ServerCertificate
@_exported import enum ReachCore.TargetHealth
@_exported import struct ReachCore.TargetQuality
@_exported import struct ReachCore.TargetStatus
@_exported import enum ReachCore.TransitionDirection
@_exported import struct ReachCore.VerdictQuality
@_exported import enum ReachCore.VerdictReason
@_exported import enum ReachSupport.IPFamily
@_exported import struct ReachSupport.MonitorClock
@_exported import struct ReachSupport.ReconnectBackoff
@_exported import struct ReachSupport.Subscription
@_exported import struct ReachSupport.WallTime
@_exported import protocol ServiceLifecycle.Service
@_exported import class ServiceLifecycle.ServiceGroup
@_exported import struct ServiceLifecycle.ServiceGroupConfiguration
@_exported import struct UnixSignals.UnixSignal

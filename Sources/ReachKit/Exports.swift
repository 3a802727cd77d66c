// What a program that imports ReachKit uses without importing anything else: the verdict's types
// from the core, and where reachd is.
@_exported import ReachCore
@_exported import struct ReachClient.ReachdEndpoint
@_exported import struct ReachClient.ReachdEndpointError

// What a program that imports ReachKitEmbedded uses without importing anything else: the engine's
// configuration, which ``EmbeddedService`` takes, and the error that names what is wrong in it.
@_exported import struct ReachConfig.Configuration
@_exported import struct ReachConfig.ConfigurationError
@_exported import struct ReachConfig.ConfigurationProblem

import ReachConfig

extension FuzzInput {
    /// A configuration file's bytes, through the YAML reader and the validation reachd runs at
    /// start and on reload (`DaemonConfiguration.parse`), with no environment (no credentials directory).
    ///
    /// A configuration that parses must parse again to the same thing; one that does not must say
    /// why (at least one problem).
    package static func config(_ bytes: [UInt8]) {
        let yaml = text(bytes)
        do {
            let configuration = try DaemonConfiguration.parse(yaml, source: "fuzz.yaml", environment: [:])
            do {
                let again = try DaemonConfiguration.parse(yaml, source: "fuzz.yaml", environment: [:])
                require(again == configuration, "the same text parsed to another configuration")
            } catch {
                preconditionFailure(
                    "fuzz invariant broken: a configuration that parsed failed the second time: \(error)"
                )
            }
        } catch {
            require(!error.problems.isEmpty, "a configuration was refused without a problem")
            _ = error.description
        }
    }
}

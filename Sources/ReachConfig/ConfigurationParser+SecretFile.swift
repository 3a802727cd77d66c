extension ConfigurationParser {
    /// The text of a secret named either by a file (`fileKey`) or by a systemd credential
    /// (`credentialKey`, a file in `$CREDENTIALS_DIRECTORY`), read with the secret size cap: where
    /// the status API's bearer token and a webhook's signing secret both come from.
    ///
    /// - Returns: The text, and the path and node a problem with its content should name; `nil`
    ///   when neither key is given or after a problem was reported.
    mutating func readSecretText(
        _ entries: [String: ConfigNode], fileKey: String, credentialKey: String, noun: String
    ) -> (text: String, path: String, node: ConfigNode)? {
        if let fileNode = entries[fileKey], entries[credentialKey] != nil {
            reader.report("use \(fileKey) or \(credentialKey), not both", at: fileNode)
            return nil
        }
        let path: String
        let node: ConfigNode
        if let fileNode = entries[fileKey] {
            guard let file = reader.string(fileNode, expected: "the path of a file holding the \(noun)") else { return nil }
            (path, node) = (file, fileNode)
        } else if let credentialNode = entries[credentialKey] {
            guard let name = reader.string(credentialNode, expected: "a credential name from LoadCredential=") else { return nil }
            guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
                reader.report("$CREDENTIALS_DIRECTORY is not set: run under systemd with LoadCredential=\(name):/path/to/\(noun)", at: credentialNode)
                return nil
            }
            (path, node) = ("\(directory)/\(name)", credentialNode)
        } else {
            return nil
        }
        switch BoundedFile.readText(path, limit: BoundedFile.secretLimit) {
        case .success(let text): return (text, path, node)
        case .failure(let failure):
            reader.report("cannot read the \(noun) from \(path): \(failure)", at: node)
            return nil
        }
    }
}

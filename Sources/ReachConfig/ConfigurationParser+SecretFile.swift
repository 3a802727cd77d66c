import ReachPOSIX
import ReachSupport

extension ConfigurationParser {
    /// The secret in a file named either by `fileKey` or by a systemd credential (`credentialKey`,
    /// a file in `$CREDENTIALS_DIRECTORY`), read by ``ReachPOSIX/BoundedFile/readSecret(_:oneLine:)``:
    /// where the status API's bearer token (`oneLine`) and a webhook's signing secret both come from.
    ///
    /// - Returns: The secret; `nil` when neither key is given or after a problem was reported.
    mutating func readSecret(
        _ entries: [String: ConfigNode],
        fileKey: String,
        credentialKey: String,
        noun: String,
        oneLine: Bool
    ) -> Secret? {
        if let fileNode = entries[fileKey], entries[credentialKey] != nil {
            reader.report("use \(fileKey) or \(credentialKey), not both", at: fileNode)
            return nil
        }
        let path: String
        let node: ConfigNode
        if let fileNode = entries[fileKey] {
            guard let file = reader.string(fileNode, expected: "the path of a file holding the \(noun)") else {
                return nil
            }
            (path, node) = (file, fileNode)
        } else if let credentialNode = entries[credentialKey] {
            guard let name = reader.string(credentialNode, expected: "a credential name from LoadCredential=") else {
                return nil
            }
            guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
                reader.report(
                    "$CREDENTIALS_DIRECTORY is not set: run under systemd with LoadCredential=\(name):/path/to/\(noun)",
                    at: credentialNode
                )
                return nil
            }
            (path, node) = ("\(directory)/\(name)", credentialNode)
        } else {
            return nil
        }
        switch BoundedFile.readSecret(path, oneLine: oneLine) {
        case .success(let secret):
            return Secret(secret)
        case .failure(.empty):
            reader.report("\(path) is empty", at: node)
        case .failure(.notOneLine(let controlCharacter)):
            reader.report(
                "\(path) \(controlCharacter ? "holds a control character" : "holds more than one line")",
                at: node
            )
        case .failure(let failure):
            reader.report("cannot read the \(noun) from \(path): \(failure)", at: node)
        }
        return nil
    }
}

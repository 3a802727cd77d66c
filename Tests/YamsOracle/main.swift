import Foundation
import Yams

// What Yams made of YAML texts, for ReachConfigTests to hold the configuration reader to (the
// composer and `ImplicitTag` replaced Yams under it). A program of its own, not linked into the
// test bundle: Yams carries its own copy of libyaml, whose symbols would stand in for the
// system's libyaml that reachd links.
//
//   yams-oracle compose    each input: its composed node's shape (YAMLComposerTests' format) or
//                          Yams' error description
//   yams-oracle tag        each input, a plain scalar: the tag Yams' default resolver gives it
//
// Inputs arrive on stdin and answers leave on stdout framed alike: the byte count in decimal, a
// newline, then the bytes.

func readFramed(_ data: Data) -> [String] {
    var inputs: [String] = []
    var index = data.startIndex
    while index < data.endIndex, let newline = data[index...].firstIndex(of: 0x0A),
        let count = Int(String(decoding: data[index..<newline], as: UTF8.self))
    {
        let start = data.index(after: newline)
        inputs.append(String(decoding: data[start..<start + count], as: UTF8.self))
        index = start + count
    }
    return inputs
}

/// A node as YAMLComposerTests prints one: kind, tag, text, style, mark, and the scalar's values.
/// Yams resolves the tags of a mapping's keys, and of everything in them, in place when it checks
/// them for duplicates: `inKey` prints those as resolved, and no values (they follow the tags).
func shape(_ node: Node?, inKey: Bool = false) -> String {
    switch node {
    case nil: return "nil"
    case .scalar(let scalar)?:
        let number = node!.float ?? node!.int.map(Double.init)
        let values = inKey ? "" : " \(String(describing: node!.bool)) \(String(describing: number))"
        return "\(scalar.mark!) \(scalar.tag.description) \(scalar.style.rawValue) \(scalar.string.debugDescription)"
            + values
    case .mapping(let mapping)?:
        return "\(mapping.mark!) \(mapping.tag.description) {"
            + mapping.map { shape($0.key, inKey: true) + ": " + shape($0.value, inKey: inKey) }.joined(separator: ", ")
            + "}"
    case .sequence(let sequence)?:
        return "\(sequence.mark!) \(sequence.tag.description) ["
            + sequence.map { shape($0, inKey: inKey) }.joined(separator: ", ") + "]"
    case .alias?: return "alias"
    }
}

let inputs = readFramed(FileHandle.standardInput.readDataToEndOfFile())
var output = Data()
for input in inputs {
    let answer: String
    switch CommandLine.arguments.dropFirst().first {
    case "compose":
        do { answer = "ok " + shape(try Yams.compose(yaml: input, .basic)) } catch { answer = "error \(error)" }
    case "tag":
        answer = Resolver.default.resolveTag(of: Node(input)).rawValue
    default:
        FileHandle.standardError.write(Data("usage: yams-oracle compose|tag < framed inputs\n".utf8))
        exit(2)
    }
    output.append(Data("\(answer.utf8.count)\n".utf8))
    output.append(Data(answer.utf8))
}
FileHandle.standardOutput.write(output)

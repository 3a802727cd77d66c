import Logging
import ReachTesting
import Testing

@testable import ReachLink

/// Random bytes and damaged real captures through parser, table and session: no trap, no hang.
///
/// Deterministic (seeded SplitMix64), so a failure reproduces. A trap fails the whole test process,
/// a hang shows as the time limit.
@Suite struct NetlinkFuzzTests {
    private static let captures: [[UInt8]] = [[String]]([
        CapturedNetlink.linkDump, CapturedNetlink.addressDump, CapturedNetlink.routeDump, CapturedNetlink.linkDown,
        CapturedNetlink.linkUp, CapturedNetlink.peerDown, CapturedNetlink.addressRemoved, CapturedNetlink.renamed,
        CapturedNetlink.deleted, CapturedNetlink.errorNoDevice, CapturedNetlink.acknowledgement,
    ]).flatMap { NetlinkBytes.datagrams($0) }

    private static let quiet = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

    private static func mutate(_ input: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        switch Int.random(in: 0..<5, using: &generator) {
        case 0:  // truncate
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
        case 1:  // flip bits
            for _ in 0..<Int.random(in: 1...8, using: &generator) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^=
                    UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
            }
        case 2:  // overwrite a length field with something extreme
            if bytes.count >= 2 {
                let offset = Int.random(in: 0..<(bytes.count - 1), using: &generator)
                let value =
                    [UInt16(0), 1, 3, 4, 0xFFFF, UInt16.random(in: 0...0xFFFF, using: &generator)].randomElement(
                        using: &generator
                    ) ?? 0
                bytes[offset] = UInt8(truncatingIfNeeded: value)
                bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
            }
        case 3:  // splice two captures at random points
            let other = captures.randomElement(using: &generator) ?? []
            bytes =
                Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
                + other.suffix(Int.random(in: 0...other.count, using: &generator))
        default:  // random garbage
            bytes = (0..<Int.random(in: 0...512, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
        }
        return bytes
    }

    // Both run off the cooperative pool: a long synchronous loop on it would delay the tests that
    // wait in real time.
    @Test(.timeLimit(.minutes(1))) func damagedCapturesNeverTrap() async throws {
        await offPool { Self.mutateCaptures() }
    }

    private static func mutateCaptures() {
        var generator = SeededGenerator(seed: 0x5EED_0001)
        var table = CapturedState.loadedTable()
        var session = NetlinkSession(kindProbe: CapturedState.fakeProbe, portID: 11391, logger: quiet)
        _ = session.start()
        var messagesSeen = 0
        var inventedMessages = 0
        for iteration in 0..<30_000 {
            let base = Self.captures[iteration % Self.captures.count]
            var bytes = Self.mutate(base, using: &generator)
            if iteration % 4 == 0 { bytes = Self.mutate(bytes, using: &generator) }
            let batch = NetlinkMessageParser.parse(bytes)
            messagesSeen += batch.messages.count
            // Parsing cannot invent data: each message consumes at least a header.
            if batch.messages.count > bytes.count / NetlinkHeader.size { inventedMessages += 1 }
            for message in batch.messages { table.apply(message) }
            if iteration % 1_000 == 0 {
                table.beginDump(.routes)
                _ = table.endDump(.routes, consistent: true)
            }
            // The session may legitimately give up after repeated dump errors; start a new one then.
            do {
                _ = try session.receive(batch)
            } catch {
                session = NetlinkSession(kindProbe: CapturedState.fakeProbe, portID: 11391, logger: quiet)
                _ = session.start()
            }
            if iteration % 16 == 0 { _ = table.snapshot() }
        }
        #expect(inventedMessages == 0)
        #expect(messagesSeen > 10_000, "the mutations should leave many messages decodable")
    }

    @Test(.timeLimit(.minutes(1))) func randomBytesNeverTrap() async {
        await offPool { Self.feedRandomBytes() }
    }

    private static func feedRandomBytes() {
        var generator = SeededGenerator(seed: 0x5EED_0002)
        var table = InterfaceTable(kindProbe: CapturedState.fakeProbe)
        for _ in 0..<20_000 {
            var bytes = (0..<Int.random(in: 0...256, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            // Plausible headers make the random bodies reach the decoders.
            if bytes.count >= 16 {
                NetlinkBytes.store(UInt32(bytes.count - Int.random(in: 0...3, using: &generator)), &bytes, 0)
                NetlinkBytes.store(
                    [UInt16(2), 3, 16, 17, 20, 21, 24, 25].randomElement(using: &generator) ?? 16,
                    &bytes,
                    4
                )
            }
            for message in NetlinkMessageParser.parse(bytes).messages { table.apply(message) }
        }
        _ = table.snapshot()
    }
}

import CNetlink

/// The fixed 16-byte header in front of every netlink message (`struct nlmsghdr`).
struct NetlinkHeader: Sendable, Hashable {
    static let size = 16

    var length: UInt32
    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    var portID: UInt32

    /// `NLM_F_MULTI`: part of a multipart reply (a dump), which ends with `NLMSG_DONE`.
    var isMultipart: Bool { flags & UInt16(NLM_F_MULTI) != 0 }
    /// `NLM_F_DUMP_INTR`: the kernel's tables changed while it was dumping, so the dump may be inconsistent.
    var isDumpInterrupted: Bool { flags & UInt16(NLM_F_DUMP_INTR) != 0 }
    /// `NLM_F_REPLACE` on a route notification: the route replaced one with the same destination.
    var isReplace: Bool { flags & UInt16(NLM_F_REPLACE) != 0 }
}

/// One rtnetlink link message (`ifinfomsg` plus the attributes reachd uses).
struct LinkMessage: Sendable, Hashable {
    /// `AF_UNSPEC` for real device notifications; `AF_BRIDGE` ones describe bridge ports and are not device events.
    var family: UInt8
    var index: Int32
    /// `ARPHRD_*`.
    var deviceType: UInt16
    /// `IFF_*`.
    var flags: UInt32
    /// `IFLA_IFNAME`; absent in partial notifications such as wireless-extension events.
    var name: String?
    /// `IFLA_OPERSTATE` (RFC 2863 `IF_OPER_*`).
    var operState: UInt8?
    /// `IFLA_LINKINFO` → `IFLA_INFO_KIND`.
    var linkKind: String?
    /// `IFLA_WIRELESS` was present: a wireless-extension event, so the device is wifi.
    var hasWirelessAttribute: Bool
}

/// One rtnetlink address message (`ifaddrmsg` plus attributes).
struct AddressMessage: Sendable, Hashable {
    var family: UInt8
    var prefixLength: UInt8
    /// `IFA_FLAGS` when present (it carries the bits above 8), else `ifa_flags`.
    var flags: UInt32
    var scope: UInt8
    var index: UInt32
    /// `IFA_LOCAL`: the interface's own address on point-to-point links.
    var local: [UInt8]?
    /// `IFA_ADDRESS`: the peer on point-to-point links, the own address everywhere else.
    var address: [UInt8]?

    /// The interface's own address, the way `ip addr` shows it as `local`.
    var ownAddress: [UInt8]? { local ?? address }
}

/// One next hop of a route: the single one of a plain route, or one entry of `RTA_MULTIPATH`.
struct NextHop: Sendable, Hashable {
    var interfaceIndex: UInt32
    var gateway: [UInt8]?
}

/// One rtnetlink route message (`rtmsg` plus attributes).
struct RouteMessage: Sendable, Hashable {
    var family: UInt8
    var destinationLength: UInt8
    var tos: UInt8
    /// `RTA_TABLE` when present (tables above 255), else `rtm_table`.
    var table: UInt32
    var type: UInt8
    var flags: UInt32
    var destination: [UInt8]?
    var priority: UInt32?
    /// From `RTA_OIF`/`RTA_GATEWAY`/`RTA_VIA`, or one per `RTA_MULTIPATH` entry.
    var nextHops: [NextHop]
}

/// A netlink message decoded into what reachd needs; anything else is kept only as its type.
struct NetlinkMessage: Sendable, Hashable {
    enum Body: Sendable, Hashable {
        case newLink(LinkMessage)
        case deleteLink(LinkMessage)
        case newAddress(AddressMessage)
        case deleteAddress(AddressMessage)
        case newRoute(RouteMessage)
        case deleteRoute(RouteMessage)
        /// `NLMSG_DONE`: the end of a dump; a negative `errorCode` means the dump failed.
        case done(errorCode: Int32)
        /// `NLMSG_ERROR`: an acknowledgement (`0`) or a failed request (negative errno).
        case error(errorCode: Int32, requestSequence: UInt32?)
        /// A type reachd does not use (`NLMSG_NOOP`, neighbour messages, ...).
        case other
    }

    var header: NetlinkHeader
    var body: Body
}

/// Something wrong in the bytes, skipped rather than trusted.
enum NetlinkParseProblem: Sendable, Hashable {
    /// Fewer bytes left than a message header: the datagram was cut short.
    case truncatedHeader(offset: Int)
    /// `nlmsg_len` smaller than a header or larger than what is left: parsing of the datagram stops here.
    case invalidLength(offset: Int, length: UInt32)
    /// A known message type whose fixed-size body is missing or unusable; the message is skipped.
    case shortBody(offset: Int, type: UInt16)
    /// An attribute whose length runs past its container; the remaining attributes are ignored.
    case invalidAttribute(offset: Int, type: UInt16)
}

/// The messages of one datagram plus whatever could not be decoded.
struct NetlinkBatch: Sendable, Hashable {
    var messages: [NetlinkMessage] = []
    var problems: [NetlinkParseProblem] = []
}

/// Turns the bytes of one netlink datagram into typed messages.
///
/// Pure and total: any byte sequence yields a batch, never a trap. Every read is bounds-checked and
/// unaligned-safe; lengths from the wire never index memory unchecked.
enum NetlinkMessageParser {
    static func parse(_ bytes: [UInt8]) -> NetlinkBatch {
        bytes.withUnsafeBytes { parse($0) }
    }

    static func parse(_ buffer: UnsafeRawBufferPointer) -> NetlinkBatch {
        var batch = NetlinkBatch()
        var offset = 0
        while offset < buffer.count {
            let remaining = buffer.count - offset
            guard remaining >= NetlinkHeader.size else {
                batch.problems.append(.truncatedHeader(offset: offset))
                break
            }
            let reader = ByteReader(UnsafeRawBufferPointer(rebasing: buffer[offset...]))
            let header = NetlinkHeader(
                length: reader.load(UInt32.self, at: 0) ?? 0,
                type: reader.load(UInt16.self, at: 4) ?? 0,
                flags: reader.load(UInt16.self, at: 6) ?? 0,
                sequence: reader.load(UInt32.self, at: 8) ?? 0,
                portID: reader.load(UInt32.self, at: 12) ?? 0
            )
            guard header.length >= NetlinkHeader.size, UInt64(header.length) <= UInt64(remaining) else {
                batch.problems.append(.invalidLength(offset: offset, length: header.length))
                break
            }
            let length = Int(header.length)
            let payload = UnsafeRawBufferPointer(rebasing: buffer[(offset + NetlinkHeader.size)..<(offset + length)])
            var attributeProblem: NetlinkParseProblem?
            if let body = decodeBody(
                header: header,
                payload: ByteReader(payload),
                payloadOffset: offset + NetlinkHeader.size,
                attributeProblem: &attributeProblem
            ) {
                batch.messages.append(NetlinkMessage(header: header, body: body))
            } else {
                batch.problems.append(.shortBody(offset: offset, type: header.type))
            }
            if let attributeProblem { batch.problems.append(attributeProblem) }
            offset += alignedToFour(length)
        }
        return batch
    }

    /// `NLMSG_ALIGN`/`RTA_ALIGN`: netlink pads every message and attribute to 4 bytes.
    static func alignedToFour(_ length: Int) -> Int {
        length > Int.max - 3 ? Int.max : (length + 3) & ~3
    }

    private static func decodeBody(
        header: NetlinkHeader,
        payload: ByteReader,
        payloadOffset: Int,
        attributeProblem: inout NetlinkParseProblem?
    ) -> NetlinkMessage.Body? {
        switch Int(header.type) {
        case Int(NLMSG_DONE):
            // Old kernels sent an empty DONE; newer ones an int error code.
            return .done(errorCode: payload.load(Int32.self, at: 0) ?? 0)
        case Int(NLMSG_ERROR):
            guard let code = payload.load(Int32.self, at: 0) else { return nil }
            return .error(errorCode: code, requestSequence: payload.load(UInt32.self, at: 4 + 8))
        case RTM_NEWLINK, RTM_DELLINK:
            guard let link = decodeLink(payload, payloadOffset, &attributeProblem) else { return nil }
            return Int(header.type) == RTM_NEWLINK ? .newLink(link) : .deleteLink(link)
        case RTM_NEWADDR, RTM_DELADDR:
            guard let address = decodeAddress(payload, payloadOffset, &attributeProblem) else { return nil }
            return Int(header.type) == RTM_NEWADDR ? .newAddress(address) : .deleteAddress(address)
        case RTM_NEWROUTE, RTM_DELROUTE:
            guard let route = decodeRoute(payload, payloadOffset, &attributeProblem) else { return nil }
            return Int(header.type) == RTM_NEWROUTE ? .newRoute(route) : .deleteRoute(route)
        default:
            return .other
        }
    }

    // MARK: Links

    private static let linkHeaderSize = 16

    private static func decodeLink(
        _ payload: ByteReader,
        _ base: Int,
        _ problem: inout NetlinkParseProblem?
    ) -> LinkMessage? {
        guard payload.count >= linkHeaderSize,
            let family = payload.load(UInt8.self, at: 0),
            let deviceType = payload.load(UInt16.self, at: 2),
            let index = payload.load(Int32.self, at: 4),
            let flags = payload.load(UInt32.self, at: 8)
        else { return nil }
        var link = LinkMessage(
            family: family,
            index: index,
            deviceType: deviceType,
            flags: flags,
            name: nil,
            operState: nil,
            linkKind: nil,
            hasWirelessAttribute: false
        )
        let attributes = payload.suffix(from: linkHeaderSize)
        problem = forEachAttribute(in: attributes, baseOffset: base + linkHeaderSize) { type, value in
            switch Int(type) {
            case IFLA_IFNAME: link.name = value.nulTerminatedString()
            case IFLA_OPERSTATE: link.operState = value.load(UInt8.self, at: 0)
            case IFLA_WIRELESS: link.hasWirelessAttribute = true
            case IFLA_LINKINFO:
                // A broken nested block only loses the kind; the outer problem is what gets reported.
                _ = forEachAttribute(in: value, baseOffset: 0) { innerType, innerValue in
                    if Int(innerType) == IFLA_INFO_KIND { link.linkKind = innerValue.nulTerminatedString() }
                }
            default: break
            }
        }
        return link
    }

    // MARK: Addresses

    private static let addressHeaderSize = 8

    private static func decodeAddress(
        _ payload: ByteReader,
        _ base: Int,
        _ problem: inout NetlinkParseProblem?
    ) -> AddressMessage? {
        guard payload.count >= addressHeaderSize,
            let family = payload.load(UInt8.self, at: 0),
            let prefixLength = payload.load(UInt8.self, at: 1),
            let flags = payload.load(UInt8.self, at: 2),
            let scope = payload.load(UInt8.self, at: 3),
            let index = payload.load(UInt32.self, at: 4)
        else { return nil }
        var address = AddressMessage(
            family: family,
            prefixLength: prefixLength,
            flags: UInt32(flags),
            scope: scope,
            index: index,
            local: nil,
            address: nil
        )
        problem = forEachAttribute(in: payload.suffix(from: addressHeaderSize), baseOffset: base + addressHeaderSize) {
            type,
            value in
            switch Int(type) {
            case IFA_ADDRESS: address.address = value.bytes()
            case IFA_LOCAL: address.local = value.bytes()
            case IFA_FLAGS: if let wide = value.load(UInt32.self, at: 0) { address.flags = wide }
            default: break
            }
        }
        return address
    }

    // MARK: Routes

    private static let routeHeaderSize = 12
    private static let nextHopHeaderSize = 8

    private static func decodeRoute(
        _ payload: ByteReader,
        _ base: Int,
        _ problem: inout NetlinkParseProblem?
    ) -> RouteMessage? {
        guard payload.count >= routeHeaderSize,
            let family = payload.load(UInt8.self, at: 0),
            let destinationLength = payload.load(UInt8.self, at: 1),
            let tos = payload.load(UInt8.self, at: 3),
            let table = payload.load(UInt8.self, at: 4),
            let type = payload.load(UInt8.self, at: 7),
            let flags = payload.load(UInt32.self, at: 8)
        else { return nil }
        var route = RouteMessage(
            family: family,
            destinationLength: destinationLength,
            tos: tos,
            table: UInt32(table),
            type: type,
            flags: flags,
            destination: nil,
            priority: nil,
            nextHops: []
        )
        var outputInterface: UInt32?
        var gateway: [UInt8]?
        var multipath: [NextHop] = []
        problem = forEachAttribute(in: payload.suffix(from: routeHeaderSize), baseOffset: base + routeHeaderSize) {
            type,
            value in
            switch type {
            case attribute(RTA_DST): route.destination = value.bytes()
            case attribute(RTA_OIF): outputInterface = value.load(UInt32.self, at: 0)
            case attribute(RTA_GATEWAY): gateway = value.bytes()
            case attribute(RTA_VIA): gateway = decodeVia(value)
            case attribute(RTA_PRIORITY): route.priority = value.load(UInt32.self, at: 0)
            case attribute(RTA_TABLE): if let wide = value.load(UInt32.self, at: 0) { route.table = wide }
            case attribute(RTA_MULTIPATH): multipath = decodeMultipath(value)
            default: break
            }
        }
        if let outputInterface {
            route.nextHops.append(NextHop(interfaceIndex: outputInterface, gateway: gateway))
        }
        route.nextHops += multipath
        return route
    }

    private static func attribute(_ type: rtattr_type_t) -> UInt16 { UInt16(truncatingIfNeeded: type.rawValue) }

    /// `struct rtvia`: a 2-byte family, then the address (an IPv4 route through an IPv6 gateway, say).
    private static func decodeVia(_ value: ByteReader) -> [UInt8]? {
        guard value.count > 2 else { return nil }
        return value.suffix(from: 2).bytes()
    }

    /// `struct rtnexthop` entries (len u16, flags u8, hops u8, ifindex i32) each followed by its attributes.
    private static func decodeMultipath(_ value: ByteReader) -> [NextHop] {
        var hops: [NextHop] = []
        var offset = 0
        while value.count - offset >= nextHopHeaderSize {
            guard let length = value.load(UInt16.self, at: offset),
                let index = value.load(UInt32.self, at: offset + 4),
                Int(length) >= nextHopHeaderSize, Int(length) <= value.count - offset
            else { break }
            var hop = NextHop(interfaceIndex: index, gateway: nil)
            let attributes = value.slice(offset + nextHopHeaderSize, offset + Int(length))
            _ = forEachAttribute(in: attributes, baseOffset: 0) { type, attributeValue in
                switch type {
                case attribute(RTA_GATEWAY): hop.gateway = attributeValue.bytes()
                case attribute(RTA_VIA): hop.gateway = decodeVia(attributeValue)
                default: break
                }
            }
            hops.append(hop)
            offset += alignedToFour(Int(length))
        }
        return hops
    }

    // MARK: Attributes

    /// `NLA_TYPE_MASK`: the top two bits of an attribute type are the nested and byte-order flags.
    private static let attributeTypeMask: UInt16 = 0x3FFF
    private static let attributeHeaderSize = 4

    /// Calls `body` for each `rtattr` in `bytes`; unknown types are the caller's to ignore.
    /// Returns a problem when an attribute's length is invalid (the rest is then skipped).
    private static func forEachAttribute(
        in bytes: ByteReader,
        baseOffset: Int,
        _ body: (UInt16, ByteReader) -> Void
    ) -> NetlinkParseProblem? {
        var offset = 0
        while bytes.count - offset >= attributeHeaderSize {
            guard let length = bytes.load(UInt16.self, at: offset),
                let rawType = bytes.load(UInt16.self, at: offset + 2)
            else {
                return nil
            }
            let type = rawType & attributeTypeMask
            guard Int(length) >= attributeHeaderSize, Int(length) <= bytes.count - offset else {
                return .invalidAttribute(offset: baseOffset + offset, type: type)
            }
            body(type, bytes.slice(offset + attributeHeaderSize, offset + Int(length)))
            offset += alignedToFour(Int(length))
        }
        return nil
    }
}

/// Bounds-checked, alignment-agnostic reads from a byte buffer; every accessor returns nil or an
/// empty value instead of reading out of range.
struct ByteReader {
    private let buffer: UnsafeRawBufferPointer

    init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    var count: Int { buffer.count }

    /// Reads a host-order integer (netlink uses the host's byte order) at `offset`.
    func load<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T? {
        guard offset >= 0, offset <= buffer.count - MemoryLayout<T>.size else { return nil }
        return buffer.loadUnaligned(fromByteOffset: offset, as: T.self)
    }

    /// The bytes in `start..<end`, clamped to the buffer.
    func slice(_ start: Int, _ end: Int) -> ByteReader {
        let lower = min(max(start, 0), buffer.count)
        let upper = min(max(end, lower), buffer.count)
        return ByteReader(UnsafeRawBufferPointer(rebasing: buffer[lower..<upper]))
    }

    func suffix(from start: Int) -> ByteReader { slice(start, buffer.count) }

    func bytes() -> [UInt8] { Array(buffer) }

    /// A C string attribute: the bytes up to the first NUL (or all of them), as UTF-8.
    func nulTerminatedString() -> String {
        let end = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<end], as: UTF8.self)
    }
}

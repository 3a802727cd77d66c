// Reading a document from a reachd older than the reader: the keys added since (`fault`, the
// uplinks' and families' arrays) may be missing, and read as "none". Every other key is required.

extension StatusDocument {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            state: try container.decode(String.self, forKey: .state),
            reason: try container.decode(String.self, forKey: .reason),
            reasonDetail: try container.decode(String.self, forKey: .reasonDetail),
            target: try container.decodeIfPresent(String.self, forKey: .target),
            fault: try container.decodeIfPresent(String.self, forKey: .fault),
            since: try container.decode(String.self, forKey: .since),
            likelyConnected: try container.decode(Bool.self, forKey: .likelyConnected),
            sequence: try container.decode(UInt64.self, forKey: .sequence),
            reset: try container.decode(Bool.self, forKey: .reset),
            version: try container.decode(String.self, forKey: .version),
            usableInterfaces: try container.decode([String].self, forKey: .usableInterfaces),
            targets: try container.decode([Target].self, forKey: .targets),
            portal: try container.decodeIfPresent(Portal.self, forKey: .portal),
            interfaces: try container.decodeIfPresent([Interface].self, forKey: .interfaces) ?? [],
            degradedFamilies: try container.decodeIfPresent([String].self, forKey: .degradedFamilies) ?? [])
    }
}

extension StatusDocument.Target {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            kind: try container.decode(String.self, forKey: .kind),
            health: try container.decode(String.self, forKey: .health),
            reason: try container.decodeIfPresent(String.self, forKey: .reason),
            phase: try container.decodeIfPresent(String.self, forKey: .phase),
            detail: try container.decodeIfPresent(String.self, forKey: .detail),
            httpStatus: try container.decodeIfPresent(Int.self, forKey: .httpStatus),
            latencySeconds: try container.decodeIfPresent(Double.self, forKey: .latencySeconds),
            timings: try container.decode(StatusDocument.Timings.self, forKey: .timings),
            lastCheckedAt: try container.decodeIfPresent(String.self, forKey: .lastCheckedAt),
            consecutiveFailures: try container.decode(Int.self, forKey: .consecutiveFailures),
            consecutiveSuccesses: try container.decode(Int.self, forKey: .consecutiveSuccesses),
            certificate: try container.decodeIfPresent(StatusDocument.Certificate.self, forKey: .certificate),
            families: try container.decodeIfPresent([String].self, forKey: .families) ?? [],
            answeredFamilies: try container.decodeIfPresent([String].self, forKey: .answeredFamilies) ?? [],
            degradedFamilies: try container.decodeIfPresent([String].self, forKey: .degradedFamilies) ?? [])
    }
}

import ReachSupport

/// What the default gateway on the system's path showed while the targets failed: the evidence
/// for ``Fault/gateway``. Found by the daemon (an ICMP echo over an unprivileged ping socket, or
/// the kernel's neighbour table where ping sockets are not allowed) and handed to the core as an
/// input, like the captive-portal API's answers.
package struct GatewayFinding: Sendable, Hashable {
    /// How the gateway was asked.
    package enum Evidence: String, Sendable, Hashable {
        /// ICMP echo requests to the gateway, out of its interface.
        case echo
        /// The kernel's neighbour table: `FAILED` or `INCOMPLETE` (the link layer cannot reach it),
        /// else nothing against it. Late: an entry stays `REACHABLE` for 15–45 s after the gateway falls silent.
        case neighbour
    }

    /// The interface of the default route the system's traffic takes.
    package var interface: String
    /// The gateway's address on it.
    package var address: IPAddress
    /// Whether it answered (an echo reply, or a neighbour entry not `FAILED`/`INCOMPLETE`).
    package var answers: Bool
    package var evidence: Evidence

    package init(interface: String, address: IPAddress, answers: Bool, evidence: Evidence) {
        self.interface = interface
        self.address = address
        self.answers = answers
        self.evidence = evidence
    }
}

/// What the upstream reference (`upstream.check`) showed while the targets failed: the evidence
/// that tells ``Fault/upstream`` from ``Fault/server``.
package enum UpstreamFinding: String, Sendable, Hashable {
    /// Something answered: a connection accepted, or refused (a refusal crossed the internet too).
    case answers
    /// Nothing answered within the probe deadline, or the path to it is unreachable.
    case unreachable
}

extension FailureReason {
    /// Whether the server (or whatever holds its address) answered: a refusal, a bad status, a
    /// failed handshake, the wrong body or protocol, a reset. The path to it works, so such a
    /// failure is the server's whatever the gateway and upstream evidence say. `false` for a
    /// silence (a timeout), an unreachable network and a name that did not resolve.
    /// A resolver's answer (`nxdomain`, `servfail`, ...) is one too: the path to the resolver works.
    package var isAnswer: Bool {
        switch self {
        case .connectionRefused, .tlsFailure, .httpStatus, .unexpectedBody, .connectionReset, .protocolError,
            .notServing, .nxdomain, .servfail, .dnsRefused, .truncatedAnswer, .malformedAnswer, .unexpectedAnswer:
            true
        case .dnsFailure, .timeout, .networkUnreachable, .cancelled, .noResolver, .notPermitted,
            .destinationUnreachable, .timeExceeded:
            false
        }
    }

    /// Whether the gateway and upstream evidence can tell where it broke: a failure without an
    /// answer that went out on the network (a silence, an unreachable network or host, a name that
    /// did not resolve, a router's ICMP error). Not an answer, nor a failure that never left this
    /// machine (`no_resolver`, `not_permitted`).
    package var needsPathEvidence: Bool {
        !isAnswer && self != .noResolver && self != .notPermitted
    }
}

/// One round of path evidence: what the default gateway and the upstream reference showed, asked
/// side by side. Either finding is `nil` when there was nothing to ask (no default gateway, no
/// upstream reference) or it could not be asked; the round still counts as done.
///
/// Until the first round since a target last failed without an answer is done, the fault of such
/// a failure is not known, and a disconnected verdict says none (``Fault/init(_:evidence:)``):
/// reachd never guesses `server` for a silence that may be the router's.
package struct PathEvidenceRound: Sendable, Hashable {
    package var gateway: GatewayFinding?
    package var upstream: UpstreamFinding?

    package init(gateway: GatewayFinding? = nil, upstream: UpstreamFinding? = nil) {
        self.gateway = gateway
        self.upstream = upstream
    }
}

extension Fault {
    /// The fault a disconnected verdict's reason shows once the path evidence is weighed, nearest
    /// first (see the table in docs/how-reachd-works.md):
    /// - a link reason is `link`; a captive portal is `portal`;
    /// - a target that answered wrongly (``FailureReason/isAnswer``) is `server`: its path works;
    /// - a resolver's answer, or no resolver at all, is `dns`; ICMP echo not allowed on this
    ///   machine is no fault of the path (`nil`: ``FailureReason/notPermitted``);
    /// - a silence, an unreachable network or a name that did not resolve waits for `evidence`
    ///   (`nil` until its first round is done: then the fault is not known yet, and `nil`);
    /// - then a silent gateway is `gateway`; else an unreachable upstream reference is `upstream`;
    /// - else a name that did not resolve is `dns`, and a silence or an unreachable network is
    ///   `server` (the upstream reference answers, or there is none to ask: then reachd cannot
    ///   tell the internet connection from the server, and says what the reason alone says).
    ///
    /// `nil` also for a verdict that is not about a failure (healthy, starting, awaiting a probe).
    package init?(_ reason: VerdictReason, evidence: PathEvidenceRound?) {
        guard case .targetFailed(_, let failure) = reason else {
            self.init(reason)
            return
        }
        if failure.isAnswer {
            self = failure.isResolverAnswer ? .dns : .server
        } else if !failure.needsPathEvidence {
            guard let fault = Fault(failure) else { return nil }
            self = fault
        } else if let evidence {
            if evidence.gateway?.answers == false {
                self = .gateway
            } else if evidence.upstream == .unreachable {
                self = .upstream
            } else {
                guard let fault = Fault(failure) else { return nil }
                self = fault
            }
        } else {
            return nil
        }
    }

    /// The fault of a failure of a target of `kind`, as `fault` says for any target: a `dns`
    /// target's server is the resolver, so what would be `server` is `dns` (the link, the gateway
    /// and the upstream still come first, where the evidence shows them).
    package static func of(_ fault: Fault?, kind: String) -> Fault? {
        fault == .server && kind == "dns" ? .dns : fault
    }
}

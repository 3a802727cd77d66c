import ReachCore

extension ReachLogEvent {
    /// The journal's `MESSAGE_ID` for this kind of event: 32 lower-case hex digits, fixed forever,
    /// explained by the entry of the same id in `systemd/reachd.catalog` (`journalctl -x`).
    ///
    /// Generated once with `systemd-id128 new`; a reader, an alert or a script may match on them.
    package var journalMessageID: String {
        switch self {
        case .connectivityLost: "40e4c5ed67904f8199b97cde18332cce"
        case .connectivityRestored: "5d373a69ff854c0caeff0e8caa568994"
        case .targetDown: "93455db3fcfd40c79ae64ed0bf9b50a1"
        case .targetUp: "b5b1fce7d248405eb7ecacf0a277ee20"
        case .captivePortal: "f0ea76c084fe49b1a425c3b77203640e"
        case .portalSessionEnding: "3edbb8950ba1408ea581dc7d51486b73"
        case .certificateExpiring: "f6641f05e93f4edb92b7609fa0005169"
        case .qualityChanged: "53a9fb57ea75433bb8e6096dc2770b97"
        case .linkChanged: "9e55e80062d34b2096ab7270957a0aef"
        case .configReloaded: "273bd6484a444f69a28ff4ea63cd768c"
        case .reloadRejected: "1dfd604988d04a4a858d8481de25b811"
        case .hookFailed: "b84a3146d7fb4ad483b969ddee2980d4"
        case .webhookGaveUp: "10d8f4bda0f84d3ea5c496a49f18aa46"
        case .started: "292b5ff1db45466fa2ef31ae09ecacc1"
        case .stopping: "bf84dae3c057489ab99d8f4eb5d1b1ba"
        }
    }
}

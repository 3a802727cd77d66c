import Logging

/// The kinds of event reachd logs with a stable identity, so that a journal reader, an alert or a
/// script can match them without parsing the message text.
///
/// A log line of one of these kinds carries its ``rawValue`` under the metadata key ``metadataKey``;
/// the journald log handler turns that into the event's fixed 128-bit `MESSAGE_ID`, which
/// `systemd/reachd.catalog` explains for `journalctl -x`. The names are part of reachd's interface:
/// add new ones, never rename one.
package enum ReachLogEvent: String, Sendable, CaseIterable {
    /// The verdict went from `connected` to `disconnected`.
    case connectivityLost = "connectivity_lost"
    /// The verdict went from `disconnected` to `connected`.
    case connectivityRestored = "connectivity_restored"
    /// A target that was healthy (or unknown) failed.
    case targetDown = "target_down"
    /// A target that was down (or unknown) answered healthy.
    case targetUp = "target_up"
    /// A captive portal holds the traffic (or another portal page is named): sign in to get through.
    case captivePortal = "captive_portal"
    /// The captive portal's session ends soon (its API's `seconds-remaining`): sign in again or lose the connection.
    case portalSessionEnding = "portal_session_ending"
    /// A target's TLS certificate (or one in its chain) expires within `tls.warn_before`.
    case certificateExpiring = "certificate_expiring"
    /// The connection's quality changed beside an unchanged verdict: slow or lossy (and where), or
    /// good again (`REACHD_QUALITY`, `REACHD_QUALITY_FAULT`, `REACHD_QUALITY_TARGET`).
    case qualityChanged = "quality_changed"
    /// The set of usable interfaces changed.
    case linkChanged = "link_changed"
    /// A reload applied a new configuration.
    case configReloaded = "config_reloaded"
    /// A reload found the new configuration invalid and kept the old one.
    case reloadRejected = "reload_rejected"
    /// A hook script exited non-zero, was killed after its timeout, or could not be started.
    case hookFailed = "hook_failed"
    /// A webhook was not accepted within its retry budget and was given up.
    case webhookGaveUp = "webhook_gave_up"
    /// reachd started.
    case started
    /// reachd is stopping.
    case stopping

    /// The metadata key under which a log line names its event kind.
    package static let metadataKey = "event"

    /// The metadata entry naming this event kind, to merge into a log line's metadata.
    package var metadata: Logger.Metadata { [Self.metadataKey: .string(rawValue)] }
}

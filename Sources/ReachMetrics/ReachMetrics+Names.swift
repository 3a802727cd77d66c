import Prometheus

/// The metrics' names and help texts, registered once each.
extension ReachMetrics {
    static func name(_ metricName: String, unit: String = "", _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: metricName, unitName: unit, helpText: help)
    }

    static var connectedName: MetricNameDescriptor {
        name(
            "reachd_connected",
            "1 when the verdict is connected (a usable link and the targets satisfy the policy), else 0."
        )
    }
    static var stateChangesName: MetricNameDescriptor {
        name(
            "reachd_state_changes",
            unit: "total",
            "Changes of the connectivity state, by the new state, the reason for it and where the path breaks (fault)."
        )
    }
    static var faultName: MetricNameDescriptor {
        name(
            "reachd_fault",
            "Where the path breaks, as a state set: 1 for the verdict's fault (link, gateway, dns, upstream, server, portal; none when connected or not yet known), 0 for the others."
        )
    }
    static var failingTargetName: MetricNameDescriptor {
        name(
            "reachd_failing_target",
            "1 for the target whose failure is why the verdict is disconnected, else 0: a fleet counts hosts per target from it."
        )
    }
    static var linkUsableName: MetricNameDescriptor {
        name(
            "reachd_link_usable",
            "1 when at least one interface is usable (up, carrier, global address, route), else 0."
        )
    }
    static var linkUpName: MetricNameDescriptor {
        name("reachd_link_up", "1 when the interface is administratively up with carrier, else 0.")
    }
    static var probeSuccessName: MetricNameDescriptor {
        name("reachd_probe_success", "1 when the target's last probe succeeded, else 0 (also before the first probe).")
    }
    static var probeDurationName: MetricNameDescriptor {
        name(
            "reachd_probe_duration",
            unit: "seconds",
            "Duration of every probe, start to finish, successful or not; for an icmp target that answered, the burst's median round trip."
        )
    }
    static var probesName: MetricNameDescriptor {
        name(
            "reachd_probes",
            unit: "total",
            "Finished probes by target and result: success or the failure reason code."
        )
    }
    static var echoesSentName: MetricNameDescriptor {
        name(
            "reachd_icmp_echoes_sent",
            unit: "total",
            "ICMP echo requests an icmp target's probes sent (loss over any window: 1 - rate(received) / rate(sent))."
        )
    }
    static var echoesReceivedName: MetricNameDescriptor {
        name(
            "reachd_icmp_echoes_received",
            unit: "total",
            "ICMP echo replies an icmp target's probes received within the timeout."
        )
    }
    static var probeSkippedName: MetricNameDescriptor {
        name(
            "reachd_probe_skipped",
            unit: "total",
            "Probe ticks skipped because the target already had as many probes in flight as may overlap."
        )
    }
    static var restorationCallbacksName: MetricNameDescriptor {
        name(
            "reachd_restoration_callbacks",
            unit: "total",
            "Runs of connectivity-restored callbacks by outcome: ok, failed, timed_out, cancelled, skipped (coalesced away)."
        )
    }
    static var subscribersName: MetricNameDescriptor {
        name(
            "reachd_subscribers",
            "Current subscribers to the verdict stream: event-stream clients and internal followers such as metrics."
        )
    }
    static var heapTrimsName: MetricNameDescriptor {
        name(
            "reachd_heap_trims",
            unit: "total",
            "Times reachd gave the heap that departed event-stream clients left behind back to the kernel (malloc_trim)."
        )
    }
    static var netlinkOverrunsName: MetricNameDescriptor {
        name(
            "reachd_netlink_overruns",
            unit: "total",
            "Netlink receive-buffer overruns; each forces a full re-read of the link table."
        )
    }
    static var lastTransitionName: MetricNameDescriptor {
        name(
            "reachd_last_transition_timestamp",
            unit: "seconds",
            "Unix time at which the connectivity state last changed."
        )
    }
    static var captivePortalName: MetricNameDescriptor {
        name(
            "reachd_captive_portal",
            "1 when a captive portal holds the interface's traffic until someone signs in, else 0."
        )
    }
    static var certificateExpiryName: MetricNameDescriptor {
        name(
            "reachd_target_certificate_expiry_timestamp",
            unit: "seconds",
            "Unix time of the earliest notAfter in the certificate chain the target last presented (blackbox_exporter's probe_ssl_earliest_cert_expiry)."
        )
    }
    static var buildInfoName: MetricNameDescriptor {
        name("reachd_build_info", "Always 1; the version label says which reachd is running.")
    }
    static var interfaceReachableName: MetricNameDescriptor {
        name(
            "reachd_interface_reachable",
            "1 when the targets answer out of this uplink alone (probe.per_interface), else 0; absent while unknown."
        )
    }
    static var hookRunsName: MetricNameDescriptor {
        name(
            "reachd_hook_runs",
            unit: "total",
            "Hook runs by hook and result: ok, failed, timed_out, not_started, refused (breaks the ownership and mode rules), cancelled."
        )
    }
    static var hookDurationName: MetricNameDescriptor {
        name("reachd_hook_duration", unit: "seconds", "How long each hook run took, start to exit (or kill).")
    }
    static var webhookDeliveriesName: MetricNameDescriptor {
        name(
            "reachd_webhook_deliveries",
            unit: "total",
            "Webhook deliveries by webhook and result: delivered (a 2xx answer), gave_up (no 2xx within the retry budget), cancelled."
        )
    }
    static var uptimeRatioName: MetricNameDescriptor {
        name(
            "reachd_uptime_ratio",
            "Connected time over known time in the window, from reachd's history; time reachd did not record counts neither way."
        )
    }
    static var historyPendingRowsName: MetricNameDescriptor {
        name(
            "reachd_history_pending_rows",
            "History rows waiting to be written: 0 while the file keeps up, growing while it cannot be written (a full disk)."
        )
    }
}

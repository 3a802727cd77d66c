import ReachBus

/// One notification as the Desktop Notifications specification describes it: what
/// `org.freedesktop.Notifications.Notify` shows, apart from the id it replaces.
///
/// Plain data, so the policy that decides what to show can be tested without a bus.
package struct DesktopNotification: Sendable, Hashable {
    /// How much the notification matters; servers use it for styling, placement and whether it
    /// expires or breaks through "do not disturb".
    package enum Urgency: UInt8, Sendable, Hashable {
        /// Informational; some servers show no banner for it.
        case low = 0
        /// The default.
        case normal = 1
        /// The specification reserves this for what needs attention now ("your battery is low").
        case critical = 2
    }

    /// When the server should take the notification away by itself.
    package enum Expiry: Sendable, Hashable {
        /// The server's default (`-1`).
        case serverDefault
        /// Never: it stays until the person dismisses it or it is replaced or closed (`0`).
        case never
        /// After this long (whole milliseconds).
        case after(Duration)

        /// The `expire_timeout` argument.
        var milliseconds: Int32 {
            switch self {
            case .serverDefault: -1
            case .never: 0
            case .after(let duration):
                Int32(
                    clamping: max(
                        1,
                        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
                    )
                )
            }
        }
    }

    /// A button (or menu entry) the server may show; invoking it sends `ActionInvoked(id, key)`.
    package struct Action: Sendable, Hashable {
        /// What comes back in `ActionInvoked`; `default` is the click on the notification itself.
        package var key: String
        /// The words on the button.
        package var label: String

        /// An action `key` shown as `label`.
        package init(key: String, label: String) {
            self.key = key
            self.label = label
        }
    }

    /// The program the notification is from (`app_name`).
    package var appName: String
    /// An icon name from the Icon Naming Specification, such as `network-offline`.
    package var icon: String
    /// The headline.
    package var summary: String
    /// The details under it.
    package var body: String
    /// The buttons, in order.
    package var actions: [Action]
    /// The `urgency` hint.
    package var urgency: Urgency
    /// A category from the specification, such as `network.disconnected`.
    package var category: String?
    /// Kept after an action is invoked, instead of being taken away (the `resident` hint).
    package var resident: Bool
    /// Not kept in the server's history once it goes (the `transient` hint).
    package var transient: Bool
    /// The `expire_timeout`.
    package var expiry: Expiry

    /// A notification from `appName`; only the icon, the summary and the body are required.
    package init(
        appName: String = "reachd",
        icon: String,
        summary: String,
        body: String,
        actions: [Action] = [],
        urgency: Urgency = .normal,
        category: String? = nil,
        resident: Bool = false,
        transient: Bool = false,
        expiry: Expiry = .serverDefault
    ) {
        self.appName = appName
        self.icon = icon
        self.summary = summary
        self.body = body
        self.actions = actions
        self.urgency = urgency
        self.category = category
        self.resident = resident
        self.transient = transient
        self.expiry = expiry
    }

    /// Appends `Notify`'s arguments (`susssasa{sv}i`).
    func writeNotifyArguments(replacing id: UInt32, to writer: BusMessageWriter) throws(BusError) {
        try writer.append(appName)
        try writer.append(id)
        try writer.append(icon)
        try writer.append(summary)
        try writer.append(body)
        try writer.container("a", "s") { () throws(BusError) in
            for action in actions {
                try writer.append(action.key)
                try writer.append(action.label)
            }
        }
        try writer.container("a", "{sv}") { () throws(BusError) in
            try hint(writer, "urgency", "y") { () throws(BusError) in try writer.append(urgency.rawValue) }
            if let category {
                try hint(writer, "category", "s") { () throws(BusError) in try writer.append(category) }
            }
            if resident { try hint(writer, "resident", "b") { () throws(BusError) in try writer.append(true) } }
            if transient { try hint(writer, "transient", "b") { () throws(BusError) in try writer.append(true) } }
        }
        try writer.append(expiry.milliseconds)
    }

    /// One `{sv}` entry of the hints.
    private func hint(
        _ writer: BusMessageWriter,
        _ name: String,
        _ type: String,
        _ value: () throws(BusError) -> Void
    ) throws(BusError) {
        try writer.container("e", "sv") { () throws(BusError) in
            try writer.append(name)
            try writer.container("v", type, value)
        }
    }
}

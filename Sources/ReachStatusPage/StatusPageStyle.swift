extension StatusPageAssets {
    /// The page's style sheet. Colours are custom properties set once per theme; every pair of text
    /// and background keeps WCAG AA contrast (4.5:1 and more), which the browser tests measure.
    package static let style = """
        :root {
          color-scheme: light dark;
          --bg: #f6f8fa; --card: #ffffff; --text: #1f2328; --muted: #57606a; --line: #d0d7de; --link: #0550ae;
          --up-bg: #dafbe1; --up: #0f5323; --down-bg: #ffebe9; --down: #8e1519; --unknown-bg: #eaeef2; --unknown: #3d444d;
          --seg-up: #1a7f37; --seg-partial: #9a6700; --seg-down: #cf222e; --seg-none: #afb8c1; --chart: #0550ae;
          --focus: #0969da;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #0d1117; --card: #161b22; --text: #e6edf3; --muted: #9198a1; --line: #30363d; --link: #79c0ff;
            --up-bg: #0f2d1a; --up: #7ee787; --down-bg: #3b1216; --down: #ffa198; --unknown-bg: #21262d; --unknown: #d1d7e0;
            --seg-up: #3fb950; --seg-partial: #d29922; --seg-down: #f85149; --seg-none: #484f58; --chart: #79c0ff;
            --focus: #58a6ff;
          }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--text); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
        a { color: var(--link); }
        :focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
        .skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem; }
        .skip:focus { left: .5rem; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        .bar { max-width: 60rem; margin: 0 auto; padding: .75rem 1rem; display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: baseline; justify-content: space-between; }
        .bar h1 { font-size: 1.1rem; margin: 0; }
        .bar p { margin: 0; color: var(--muted); font-size: .9rem; }
        .live[data-state="reconnecting"] { color: var(--down); font-weight: 600; }
        main { max-width: 60rem; margin: 0 auto; padding: 0 1rem 1rem; display: grid; gap: 1rem; }
        main > * { min-width: 0; }
        .card, .verdict { background: var(--card); border: 1px solid var(--line); border-radius: .75rem; padding: 1rem 1.25rem; }
        h2 { font-size: 1.15rem; margin: 0 0 .75rem; }
        h3 { font-size: 1rem; margin: 0; }
        .muted { color: var(--muted); }
        .verdict { border-width: 2px; }
        .verdict[data-state="connected"] { background: var(--up-bg); color: var(--up); border-color: var(--up); }
        .verdict[data-state="disconnected"] { background: var(--down-bg); color: var(--down); border-color: var(--down); }
        .verdict[data-state="unknown"] { background: var(--unknown-bg); color: var(--unknown); border-color: var(--unknown); }
        .verdict-line { display: grid; grid-template-columns: auto 1fr; gap: 0 1rem; align-items: center; }
        .verdict .icon { width: 4rem; height: 4rem; grid-row: span 2; }
        .verdict-word { font-size: 2.5rem; font-weight: 700; line-height: 1.1; margin: 0; overflow-wrap: anywhere; }
        .verdict-reason { font-size: 1.15rem; margin: 0; overflow-wrap: anywhere; }
        .since { margin: .75rem 0 0; }
        .facts { display: flex; flex-wrap: wrap; gap: .25rem 1.5rem; margin: .5rem 0 0; }
        .facts div { display: flex; gap: .4rem; }
        .facts dt { font-weight: 600; }
        .facts dd { margin: 0; overflow-wrap: anywhere; }
        [hidden] { display: none !important; }
        .icon { fill: none; stroke: currentColor; stroke-width: 2.2; stroke-linecap: round; stroke-linejoin: round; flex: none; }
        .icon path { display: none; }
        [data-state="connected"] .when-up, [data-state="healthy"] .when-up, [data-state="usable"] .when-up { display: inline; }
        [data-state="disconnected"] .when-down, [data-state="unhealthy"] .when-down { display: inline; }
        [data-state="unknown"] .when-unknown { display: inline; }
        .targets, .plain { list-style: none; margin: 0; padding: 0; display: grid; gap: .75rem; }
        .targets { grid-template-columns: repeat(auto-fill, minmax(min(17rem, 100%), 1fr)); }
        .target { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; min-width: 0; }
        .item-head { display: flex; flex-wrap: wrap; justify-content: space-between; gap: .25rem .5rem; align-items: center; }
        .item-head h3 { overflow-wrap: anywhere; min-width: 0; }
        .interface { border-top: 1px solid var(--line); padding-top: .5rem; }
        .interface:first-child { border-top: 0; padding-top: 0; }
        .interface .facts { margin-top: .25rem; font-size: .9rem; }
        .badge { display: inline-flex; gap: .3rem; align-items: center; padding: .1rem .5rem; border-radius: 1rem; font-weight: 600; font-size: .9rem; }
        .badge .icon { width: 1.1rem; height: 1.1rem; }
        [data-state="healthy"] > .item-head .badge, [data-state="usable"] > .item-head .badge { background: var(--up-bg); color: var(--up); }
        [data-state="unhealthy"] > .item-head .badge { background: var(--down-bg); color: var(--down); }
        [data-state="unknown"] > .item-head .badge { background: var(--unknown-bg); color: var(--unknown); }
        .target-detail { margin: .25rem 0 0; font-size: .9rem; overflow-wrap: anywhere; }
        .chart { width: 100%; height: 3rem; margin-top: .5rem; display: block; }
        .chart .axis { stroke: var(--line); stroke-width: 1; vector-effect: non-scaling-stroke; }
        .chart .line { fill: none; stroke: var(--chart); stroke-width: 2; vector-effect: non-scaling-stroke; }
        .chart .dot { fill: var(--chart); }
        .uptime-head { display: flex; gap: .75rem; align-items: baseline; flex-wrap: wrap; }
        .ratio { font-weight: 700; }
        .bars { width: 100%; height: 1.5rem; display: block; margin-top: .25rem; }
        .seg.up { fill: var(--seg-up); } .seg.partial { fill: var(--seg-partial); } .seg.down { fill: var(--seg-down); } .seg.none { fill: var(--seg-none); }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: .95rem; }
        th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        #transitions td:nth-child(2) span { white-space: nowrap; }
        #transitions td:nth-child(n+3) { overflow-wrap: anywhere; }
        td .icon { width: 1rem; height: 1rem; vertical-align: -.15rem; }
        tr[data-state="disconnected"] td:nth-child(2) { color: var(--down); }
        tr[data-state="connected"] td:nth-child(2) { color: var(--up); }
        @media (max-width: 40rem) {
          #transitions thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
          #transitions, #transitions tbody, #transitions tr { display: block; }
          #transitions tr { padding: .4rem 0; border-bottom: 1px solid var(--line); }
          #transitions td { display: grid; grid-template-columns: 4.5rem 1fr; gap: .5rem; padding: .1rem 0; border: 0; overflow-wrap: anywhere; }
          #transitions td::before { content: attr(data-label); content: attr(data-label) / ""; font-weight: 600; }
        }
        @media (max-width: 30rem) {
          main { padding: 0 .5rem .5rem; gap: .75rem; }
          .bar { padding: .75rem .5rem; }
          .card, .verdict { padding: .75rem; }
          .verdict-word { font-size: 2rem; }
          .verdict .icon { width: 3rem; height: 3rem; }
          #transitions td { font-size: .9rem; }
        }

        """
}

"""The acp spawn runtime (``runtime.acp``): external ACP agents serving clawline child sessions.

``children`` holds the children's agent processes and writes their run ends (``AcpRuntime``);
``child_agent`` is one child's agent process with its ACP session (started and spoken to through
the client stack, :mod:`clawline.acp_client`), ``callbacks`` the client object the SDK calls for
it (``session/update``, permissions); ``router`` sends an ACP child's runs to ``acp_runner``
(``AcpRunner``, the runner of ACP children: one run = one ``session/prompt``), whose ``updates``
become the run's output and, with ``streamTo: "parent"``, go through the ``relay``. See
docs/design-acp.md.
"""

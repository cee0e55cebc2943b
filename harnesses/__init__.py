"""Agent harnesses: the loops that drive a model (or an external coding agent) through a task.

- `harnesses.base`: the plug-in interface (`Harness`, `TrialContext`, `HarnessResult`) and the
  registry (entry-point group ``kernelarena.harnesses``).
- `harnesses.minimal`: the published two-tool loop; `harnesses.external`: external CLI agents.
- `harnesses.trial`: `run_trial`, one trial end to end; `harnesses.transcript`, `.budget`,
  `.prompts`: what every harness shares. `harnesses.models`: the model clients.

Nothing is imported here, so importing one part never pulls in the provider SDKs.
"""

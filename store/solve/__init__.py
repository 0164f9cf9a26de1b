"""Solving a stored graph: one entry, :func:`dicegraph.store.solve.entry.solve_graph`, that picks the method from what
the graph is.

* A graph stored as rows is solved a layer at a time by backward induction (:mod:`dicegraph.store.solve.layers`), and
  its cyclic components, where it loops, by Newton's method (:mod:`dicegraph.store.solve.cycles`).
* A game whose turn is stored once beside its turn states (its declared ``turn``) is solved by playing the
  turn from every state of a state layer at once (:mod:`dicegraph.store.solve.turns`), with Newton's method per
  layer where the states loop (a race, :mod:`dicegraph.store.solve.turn_cycles`); its declared turn policies are
  solved together, and committed a state layer at a time, so that an interrupted solve resumes.

* Beyond the average: a target (``at-least:T``) is a goal on the terminals; a best response
  (:mod:`dicegraph.store.solve.graph_matches`; a race's, :mod:`dicegraph.store.solve.race_matches`, keeping the
  answered policy's values beside its own) maximises in one seat against a stored policy in the other; a turn
  stored once is played forward to the whole distribution of a game's score
  (:mod:`dicegraph.store.solve.turn_outcomes`). :mod:`dicegraph.store.solve.objectives` parses what a solve is
  asked for.

Each operation the solvers share with a backend's faster implementations (Spark's folds) has its reference
here, in portable SQL, and one dispatch (:mod:`dicegraph.store.solve.dispatch`) that sends a call to a registered
faster one where it can run it. The package's ``__init__`` imports nothing, so that a module elsewhere may import
one of the solvers' modules without running every solver's import.
"""

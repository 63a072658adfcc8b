"""How things are registered, told and run: `disposer` (what undoes a registration), `listeners`
(functions told of something in turn, one that raises logged and the others still told) and
`lifetime` (the base of an object used as `async with obj:` that runs things meanwhile).

Standard library only, at the package's lowest level: the abort signal, the kernel, the stores,
the gate and the hub all register listeners and run lifetimes the same way.
"""

package spec

// The partial-order reduction's declarations for decommission (decommission.go), reached
// from the action table (actiontable.go): each action's own footprint
// (what Footprints.Of adds to the rules of its category), when it is dead
// (Footprints.Dead), and what must change to enable it
// (Footprints.NecessaryInto). footprint.go holds the variables and the
// rules of each category; spec/porbound checks the declarations against
// whole graphs.

// fpAdminDecommissionsBookie is the own footprint (Footprints.Of) of AdminDecommissionsBookie.
func fpAdminDecommissionsBookie(x fp, a Action) {
	f := x.f
	b := int(a.Bookie)
	x.read(f.Decom(), f.Down(b), f.Worker())
	x.write(f.Decom())
}

// fpAdminFinishesDecommission is the own footprint (Footprints.Of) of AdminFinishesDecommission.
func fpAdminFinishesDecommission(x fp, a Action) {
	f := x.f
	x.read(f.Decom())
	x.readMeta()
	x.write(f.Decom())
}

// deadAdminDecommissionsBookie is the deadness (Footprints.Dead) of AdminDecommissionsBookie.
func deadAdminDecommissionsBookie(d deadView, a Action) bool {
	s := d.s
	return s.DecomBookie != 0 // one decommission per run
}

// deadAdminFinishesDecommission is the deadness (Footprints.Dead) of AdminFinishesDecommission.
func deadAdminFinishesDecommission(d deadView, a Action) bool {
	s := d.s
	return s.DecomDone
}

// necAdminDecommissionsBookie is the necessary enabling set (Footprints.NecessaryInto) of AdminDecommissionsBookie.
func necAdminDecommissionsBookie(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	b := n.b
	if !s.unregistered().Has(b) {
		n.vs.add(f.Down(b)) // once it is down and unregistered (Dead once one is decommissioned)
		return n.vs, true
	}
	return n.vs, false
}

// necAdminFinishesDecommission is the necessary enabling set (Footprints.NecessaryInto) of AdminFinishesDecommission.
func necAdminFinishesDecommission(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	if s.DecomBookie == 0 {
		n.vs.add(f.Decom())
		return n.vs, true
	}
	return n.vs, false
}

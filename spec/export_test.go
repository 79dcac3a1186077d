package spec

// EncodeRelabelledPair encodes s relabelled by bookie permutation bp and
// client permutation cp (of the ids in use) in the two ways the package
// has: in one pass (Canonicalizer.EncodeRelabelled, encode with a
// relabeller as the canonicalizer does) and by building the relabelled
// state (permute) and encoding it. They must agree (TestEncodeRelabelled).
func (m *Model) EncodeRelabelledPair(s *State, bp, cp []int8) (fused, built []byte) {
	r := Relabelling{relabelling(bp, cp)}
	fused = m.NewCanonicalizer(Symmetry{}).EncodeRelabelled(nil, s, r)
	var perm State
	m.permute(&perm, s, &r.pm)
	return fused, m.Encode(nil, &perm)
}

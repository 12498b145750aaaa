package client

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rebalsim/rebalsim/model/protocol"
)

// TestTemplateMembersShareConfiguration: members built from one Template
// share one copy of the configuration (memory per member at 100,000
// members) and
// still send their own client id and group.instance.id, as members built by
// NewMember from a configuration of their own do.
func TestTemplateMembersShareConfiguration(t *testing.T) {
	cfg := testConfig("kafka-3.x")
	cfg.Name = ""
	tmpl, err := NewTemplate(cfg)
	require.NoError(t, err)
	joinOf := func(m *Member) *protocol.JoinGroupRequest {
		d := &driver{t: t, m: m}
		d.start()
		d.findCoordinator()
		return d.pop(protocol.APIJoinGroup).Req.(*protocol.JoinGroupRequest)
	}
	a := tmpl.NewMember("g-0", "", rand.New(rand.NewPCG(1, 2)))
	b := tmpl.NewMember("g-1", "g-1", rand.New(rand.NewPCG(1, 2)))
	assert.Same(t, a.cfg, b.cfg, "one configuration for both")
	ja, jb := joinOf(a), joinOf(b)
	assert.Equal(t, "g-0", ja.ClientID)
	assert.Equal(t, "", ja.GroupInstanceID)
	assert.Equal(t, "g-1", jb.ClientID)
	assert.Equal(t, "g-1", jb.GroupInstanceID)

	// The same member from a configuration of its own sends the same
	// JoinGroup.
	own := cfg
	own.Name, own.GroupInstanceID = "g-1", "g-1"
	assert.Equal(t, jb, joinOf(NewMember(own, rand.New(rand.NewPCG(1, 2)))))

	// Changing the configuration afterwards changes no member.
	cfg.Topics[0] = "other"
	assert.Equal(t, []string{"t"}, a.cfg.Topics)
}

// TestTemplateMembersShareJoinProtocols: members of one Template joining at
// the same generation without owned partitions send one shared protocol list
// (memory per member), equal to the one a member builds alone; a
// member with owned partitions (subscription v1+, 2.4) or at another
// generation (v2, 3.x) gets its own, with its own content.
func TestTemplateMembersShareJoinProtocols(t *testing.T) {
	cfg := testConfig("kafka-3.x")
	cfg.Name = ""
	cfg.Assignors = []string{"range", "cooperative-sticky"}
	tmpl, err := NewTemplate(cfg)
	require.NoError(t, err)
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
	a, b, c := tmpl.NewMember("g-0", "", rng()), tmpl.NewMember("g-1", "", rng()), tmpl.NewMember("g-2", "", rng())
	pa, pb := a.cfg.groupProtocols(a.owned, a.gen.id()), b.cfg.groupProtocols(b.owned, b.gen.id())
	require.Len(t, pa, 2)
	assert.Same(t, &pa[0], &pb[0], "one list for both")
	own := cfg
	own.Name = "g-0"
	alone := NewMember(own, rng())
	assert.Equal(t, alone.cfg.groupProtocols(alone.owned, alone.gen.id()), pa)

	c.owned = []protocol.TopicPartition{{Topic: "t", Partition: 0}}
	pc := c.cfg.groupProtocols(c.owned, c.gen.id())
	assert.NotSame(t, &pa[0], &pc[0])
	assert.Equal(t, c.owned, pc[1].Metadata.OwnedPartitions)
	assert.Nil(t, pa[1].Metadata.OwnedPartitions, "the shared list is unchanged")

	c.owned, c.gen = nil, newGeneration(7, "", "", false)
	pc = c.cfg.groupProtocols(c.owned, c.gen.id())
	assert.NotSame(t, &pa[0], &pc[0])
	assert.Equal(t, int32(7), pc[0].Metadata.GenerationID)
	assert.Equal(t, protocol.NoGeneration, pa[0].Metadata.GenerationID)
}

// TestNewTemplateRejectsInvalidConfiguration: NewTemplate validates as
// NewMember does (Config.Validate, the assignors), returning the error
// NewMember panics with; a member needs a name.
func TestNewTemplateRejectsInvalidConfiguration(t *testing.T) {
	bad := testConfig("kafka-3.x")
	bad.SessionTimeout = 0
	_, err := NewTemplate(bad)
	assert.ErrorContains(t, err, "session.timeout.ms")

	unknown := testConfig("kafka-3.x")
	unknown.Assignors = []string{"no-such-assignor"}
	_, err = NewTemplate(unknown)
	assert.ErrorContains(t, err, `unknown assignor "no-such-assignor"`)
	assert.PanicsWithValue(t, `client: NewMember: unknown assignor "no-such-assignor"`, func() {
		NewMember(unknown, rand.New(rand.NewPCG(1, 2)))
	})

	tmpl, err := NewTemplate(testConfig("kafka-3.x"))
	require.NoError(t, err)
	assert.Panics(t, func() { tmpl.NewMember("", "", rand.New(rand.NewPCG(1, 2))) })
}

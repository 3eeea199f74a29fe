//! The search tree of Monte Carlo tree search (UCT, with all-moves-as-first statistics in
//! the games that ask for them): selection, expansion, a playout, back-propagation.

use std::collections::HashSet;
use std::time::Instant;

use stoa_protocol::Side;

use super::knowledge::Knowledge;
use super::search::{playout, value, Rng};

/// One position of the tree, reached by `action`.
struct Node<A> {
    /// The action that led here (`None` at the root).
    action: Option<A>,
    /// Who played `action`.
    mover: Option<Side>,
    parent: Option<usize>,
    children: Vec<usize>,
    untried: Vec<A>,
    visits: f64,
    /// Score for `mover`: 1 a win, 0.5 a draw.
    score: f64,
    /// All-moves-as-first statistics (games with [`Knowledge::RAVE`]): simulations through
    /// the parent in which `mover` played `action` at any later point, and their score.
    amaf_visits: f64,
    amaf_score: f64,
}

impl<A> Node<A> {
    /// A node not visited yet.
    fn new(action: Option<A>, mover: Option<Side>, parent: Option<usize>, untried: Vec<A>) -> Self {
        Node {
            action,
            mover,
            parent,
            children: Vec::new(),
            untried,
            visits: 0.0,
            score: 0.0,
            amaf_visits: 0.0,
            amaf_score: 0.0,
        }
    }
}

/// How many real visits the all-moves-as-first estimate is worth: it dominates a node's
/// value while the node has few visits of its own and fades as they grow.
const RAVE_EQUIVALENCE: f64 = 500.0;

/// A search tree over a game's actions; node 0 is the position searched.
pub(super) struct Tree<A> {
    nodes: Vec<Node<A>>,
}

impl<A: Copy + Eq + std::hash::Hash> Tree<A> {
    /// A tree whose root may play `actions`.
    pub(super) fn new(actions: Vec<A>) -> Self {
        Tree {
            nodes: vec![Node::new(None, None, None, actions)],
        }
    }

    /// Searches from `game` until `limit` playouts are done (none: until `deadline`, which
    /// stops every level) and answers the most visited action, the most trusted.
    pub(super) fn search<G: Knowledge<Action = A>>(
        mut self,
        game: &G,
        limit: Option<u32>,
        deadline: Instant,
        rng: &mut Rng,
    ) -> Option<A> {
        self.grow(game, limit, deadline, rng);
        let root = &self.nodes[0];
        root.children
            .iter()
            .max_by(|&&a, &&b| self.nodes[a].visits.total_cmp(&self.nodes[b].visits))
            .and_then(|&c| self.nodes[c].action)
            .or_else(|| root.untried.first().copied())
    }

    /// Searches as [`Tree::search`] does and answers the most visited action with its mean
    /// score for the side playing it (0 to 1): what an engine review reads as the position's
    /// value. `None` when the root has no action.
    pub(super) fn search_valued<G: Knowledge<Action = A>>(
        mut self,
        game: &G,
        limit: Option<u32>,
        deadline: Instant,
        rng: &mut Rng,
    ) -> Option<(A, f64)> {
        self.grow(game, limit, deadline, rng);
        let root = &self.nodes[0];
        let best = root
            .children
            .iter()
            .max_by(|&&a, &&b| self.nodes[a].visits.total_cmp(&self.nodes[b].visits))?;
        let node = &self.nodes[*best];
        Some((node.action?, node.score / node.visits.max(1.0)))
    }

    /// The search loop: playouts from `game` until `limit` or `deadline`.
    fn grow<G: Knowledge<Action = A>>(
        &mut self,
        game: &G,
        limit: Option<u32>,
        deadline: Instant,
        rng: &mut Rng,
    ) {
        let mut done = 0u32;
        let mut scratch = Vec::new();
        // Who played what since the root, for the all-moves-as-first statistics.
        let mut trace: Vec<(Side, A)> = Vec::new();
        let mut seen: HashSet<(Side, A)> = HashSet::new();
        loop {
            if limit.is_some_and(|n| done >= n)
                || (done.is_multiple_of(16) && Instant::now() >= deadline)
            {
                break;
            }
            done += 1;
            let mut g = game.clone();
            trace.clear();
            let node = self.select(&mut g, &mut trace);
            let node = self.expand(node, &mut g, &mut trace, rng);
            // Simulation: the game's playout actions.
            let in_tree = trace.len();
            playout(&mut g, rng, &mut scratch, G::RAVE.then_some(&mut trace));
            self.back_propagate::<G>(node, value(&g), &trace, in_tree, &mut seen);
        }
    }

    /// Selection: follows UCT through fully expanded nodes, playing their actions on `g`.
    fn select<G: Knowledge<Action = A>>(&self, g: &mut G, trace: &mut Vec<(Side, A)>) -> usize {
        let mut node = 0;
        while self.nodes[node].untried.is_empty() && !self.nodes[node].children.is_empty() {
            node = self.best_child::<G>(node);
            let Some(action) = self.nodes[node].action else {
                break;
            };
            if let Some(mover) = self.nodes[node].mover {
                trace.push((mover, action));
            }
            g.apply(action);
        }
        node
    }

    /// The child of `node` with the highest upper confidence bound.
    fn best_child<G: Knowledge<Action = A>>(&self, node: usize) -> usize {
        let parent_visits = self.nodes[node].visits.max(1.0).ln();
        let mut best = self.nodes[node].children[0];
        let mut best_value = f64::MIN;
        for &c in &self.nodes[node].children {
            let n = &self.nodes[c];
            let mean = n.score / n.visits;
            let value = if G::RAVE && n.amaf_visits > 0.0 {
                let beta = (RAVE_EQUIVALENCE / (3.0 * n.visits + RAVE_EQUIVALENCE)).sqrt();
                (1.0 - beta) * mean
                    + beta * n.amaf_score / n.amaf_visits
                    + 0.6 * (parent_visits / n.visits).sqrt()
            } else {
                mean + 1.2 * (parent_visits / n.visits).sqrt()
            };
            if value > best_value {
                best_value = value;
                best = c;
            }
        }
        best
    }

    /// Expansion: plays one untried action of `node` (when it has one) into a new node.
    fn expand<G: Knowledge<Action = A>>(
        &mut self,
        node: usize,
        g: &mut G,
        trace: &mut Vec<(Side, A)>,
        rng: &mut Rng,
    ) -> usize {
        if self.nodes[node].untried.is_empty() {
            return node;
        }
        let i = rng.below(self.nodes[node].untried.len());
        let action = self.nodes[node].untried.swap_remove(i);
        let mover = g.to_act();
        if let Some(m) = mover {
            trace.push((m, action));
        }
        g.apply(action);
        let mut untried = Vec::new();
        if g.outcome().is_none() {
            g.legal_actions(&mut untried);
        }
        self.nodes
            .push(Node::new(Some(action), mover, Some(node), untried));
        let child = self.nodes.len() - 1;
        self.nodes[node].children.push(child);
        child
    }

    /// Back-propagation of a playout worth `first` to the first side, from `node` up.
    ///
    /// A node at depth k sees the actions played from ply k of the trace on: the playout's
    /// first, then one more tree action per level up (`in_tree`: the trace's tree part).
    fn back_propagate<G: Knowledge<Action = A>>(
        &mut self,
        node: usize,
        first: f64,
        trace: &[(Side, A)],
        in_tree: usize,
        seen: &mut HashSet<(Side, A)>,
    ) {
        let for_side = |side: Side| match side {
            Side::First => first,
            Side::Second => 1.0 - first,
        };
        seen.clear();
        if G::RAVE {
            seen.extend(trace[in_tree..].iter().copied());
        }
        let mut depth = in_tree;
        let mut at = Some(node);
        while let Some(i) = at {
            let n = &mut self.nodes[i];
            n.visits += 1.0;
            n.score += n.mover.map_or(0.5, for_side);
            at = n.parent;
            if G::RAVE {
                for k in 0..self.nodes[i].children.len() {
                    let c = self.nodes[i].children[k];
                    let (Some(mover), Some(action)) = (self.nodes[c].mover, self.nodes[c].action)
                    else {
                        continue;
                    };
                    if seen.contains(&(mover, action)) {
                        self.nodes[c].amaf_visits += 1.0;
                        self.nodes[c].amaf_score += for_side(mover);
                    }
                }
                if depth > 0 {
                    depth -= 1;
                    seen.insert(trace[depth]);
                }
            }
        }
    }
}

//! The contents of one cell and the landing rules.
//!
//! A legal stack is always some neutral tokens at the bottom and then tokens of one colour
//! (no neutral ever stands above a coloured token), so a cell is fully described by
//! (neutral count, coloured count, colour) and packs into one byte. Illegal stacks are thus
//! unrepresentable, which keeps move generation free of re-checks.

use crate::game::Side;

/// One token.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Token {
    /// A white token.
    White,
    /// A black token.
    Black,
    /// A neutral token.
    Neutral,
}

impl Token {
    /// The token of a side's colour (white acts first).
    pub const fn of(side: Side) -> Token {
        match side {
            Side::First => Token::White,
            Side::Second => Token::Black,
        }
    }

    /// The position-string letter.
    pub const fn letter(self) -> char {
        match self {
            Token::White => 'W',
            Token::Black => 'B',
            Token::Neutral => 'N',
        }
    }

    /// The name used in the JSON view.
    pub const fn name(self) -> &'static str {
        match self {
            Token::White => "white",
            Token::Black => "black",
            Token::Neutral => "neutral",
        }
    }
}

/// What a landing did to the landing cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Landing {
    /// The cell was empty.
    Empty,
    /// The cell was topped by the opponent: all its tokens were removed.
    Capture,
    /// The unit was stacked onto the mover's or neutral tokens.
    Stack,
}

/// Why a unit cannot land on a cell (for human-readable `check` messages).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LandingError {
    /// The result would be taller than `max_stack`.
    TooTall,
    /// A neutral token would stand above a coloured token.
    NeutralAbove,
}

/// The tokens of one cell: bits 0-1 neutral count, bits 2-3 coloured count, bit 4 colour
/// (0 white, 1 black; 0 when there is no coloured token).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stack(u8);

impl Stack {
    /// An empty cell.
    pub const EMPTY: Stack = Stack(0);
    /// One neutral token.
    pub const NEUTRAL: Stack = Stack(1);

    /// A stack of `neutrals` neutral tokens under `coloured` tokens of `colour`.
    pub const fn new(neutrals: u8, coloured: u8, colour: Side) -> Stack {
        let c = if coloured == 0 {
            0
        } else {
            colour.index() as u8
        };
        Stack((neutrals & 3) | ((coloured & 3) << 2) | (c << 4))
    }

    /// `n` tokens of a side's colour.
    pub const fn of(side: Side, n: u8) -> Stack {
        Stack::new(0, n, side)
    }

    /// Number of neutral tokens (all at the bottom).
    #[inline]
    pub const fn neutrals(self) -> u8 {
        self.0 & 3
    }

    /// Number of coloured tokens (all above the neutrals).
    #[inline]
    pub const fn coloured(self) -> u8 {
        (self.0 >> 2) & 3
    }

    /// Total number of tokens.
    #[inline]
    pub const fn height(self) -> u8 {
        self.neutrals() + self.coloured()
    }

    /// Whether the cell holds no token.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The colour of the coloured tokens, if there are any: the stack's owner.
    #[inline]
    pub const fn owner(self) -> Option<Side> {
        if self.coloured() == 0 {
            None
        } else {
            Some(Side::from_index((self.0 >> 4) as usize))
        }
    }

    /// The top token, if any.
    pub const fn top(self) -> Option<Token> {
        match self.owner() {
            Some(side) => Some(Token::of(side)),
            None if self.neutrals() > 0 => Some(Token::Neutral),
            None => None,
        }
    }

    /// Tokens from bottom to top.
    pub fn tokens(self) -> impl Iterator<Item = Token> {
        let top = self.owner().map(Token::of).unwrap_or(Token::Neutral);
        std::iter::repeat_n(Token::Neutral, self.neutrals() as usize)
            .chain(std::iter::repeat_n(top, self.coloured() as usize))
    }

    /// Builds a stack from tokens bottom to top; `None` when they do not form a legal stack
    /// (a neutral above a coloured token, two colours, or more than 3 tokens).
    pub fn from_tokens(tokens: &[Token]) -> Option<Stack> {
        if tokens.len() > 3 {
            return None;
        }
        let mut neutrals = 0;
        let mut coloured = 0;
        let mut colour = None;
        for &t in tokens {
            match t {
                Token::Neutral if coloured == 0 => neutrals += 1,
                Token::Neutral => return None,
                Token::White | Token::Black => {
                    let side = if t == Token::White {
                        Side::First
                    } else {
                        Side::Second
                    };
                    if colour.is_some_and(|c| c != side) {
                        return None;
                    }
                    colour = Some(side);
                    coloured += 1;
                }
            }
        }
        Some(Stack::new(
            neutrals,
            coloured,
            colour.unwrap_or(Side::First),
        ))
    }

    /// Splits off the top `k` tokens: `(unit, left behind)`. `k` is clamped to the height.
    #[inline]
    pub const fn lift(self, k: u8) -> (Stack, Stack) {
        let k = if k > self.height() { self.height() } else { k };
        let side = match self.owner() {
            Some(s) => s,
            None => Side::First,
        };
        let (n, c) = (self.neutrals(), self.coloured());
        if k <= c {
            (Stack::new(0, k, side), Stack::new(n, c - k, side))
        } else {
            (Stack::new(k - c, c, side), Stack::new(n - (k - c), 0, side))
        }
    }

    /// Lands `self` (a unit topped by its owner's colour) on `target`: the resulting cell and
    /// what happened, or why it is not allowed.
    #[inline]
    pub const fn land(
        self,
        target: Stack,
        max_stack: u8,
    ) -> Result<(Stack, Landing), LandingError> {
        if target.is_empty() {
            return Ok((self, Landing::Empty));
        }
        let (tn, tc) = (target.neutrals(), target.coloured());
        if tc > 0 && target.0 >> 4 != self.0 >> 4 {
            return Ok((self, Landing::Capture));
        }
        // Stacking onto own or neutral tokens: the unit's neutrals would stand above the
        // target's coloured tokens unless one of the two has none.
        if tc > 0 && self.neutrals() > 0 {
            return Err(LandingError::NeutralAbove);
        }
        if target.height() + self.height() > max_stack {
            return Err(LandingError::TooTall);
        }
        Ok((
            Stack((tn + self.neutrals()) | ((tc + self.coloured()) << 2) | (self.0 & 0x10)),
            Landing::Stack,
        ))
    }
}

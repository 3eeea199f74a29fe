//! CPU lists in `taskset`'s syntax (`0-3`, `0,2`, `0-1,4`), as the measuring tools take
//! them on their command lines and hand them back to `taskset -c`.

use std::fmt;

/// A set of CPUs, in the order given, without repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

impl CpuList {
    /// Parses `taskset -c` syntax: comma-separated CPUs and inclusive ranges.
    pub fn parse(text: &str) -> Result<CpuList, String> {
        let mut cpus = Vec::new();
        for part in text.split(',').map(str::trim) {
            let (from, to) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let number = |s: &str| {
                s.parse::<usize>()
                    .map_err(|_| format!("{text:?}: {s:?} is not a CPU number"))
            };
            let (from, to) = (number(from)?, number(to)?);
            if from > to {
                return Err(format!("{text:?}: the range {from}-{to} runs backwards"));
            }
            for cpu in from..=to {
                if !cpus.contains(&cpu) {
                    cpus.push(cpu);
                }
            }
        }
        Ok(CpuList(cpus))
    }

    /// The CPUs online on this machine (`/sys/devices/system/cpu/online`; failing that,
    /// `0..` the cores this process may use).
    pub fn online() -> CpuList {
        std::fs::read_to_string("/sys/devices/system/cpu/online")
            .ok()
            .and_then(|t| CpuList::parse(t.trim()).ok())
            .unwrap_or_else(|| {
                let n = std::thread::available_parallelism().map_or(1, |n| n.get());
                CpuList((0..n).collect())
            })
    }

    /// How many CPUs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `i`-th of `n` equal blocks (consecutive in the list's order); what a block
    /// cannot share evenly is left over at the end. `None` when there are fewer CPUs
    /// than blocks.
    pub fn block(&self, i: usize, n: usize) -> Option<CpuList> {
        let size = self.0.len() / n.max(1);
        (size > 0 && i < n).then(|| CpuList(self.0[i * size..(i + 1) * size].to_vec()))
    }

    /// The CPUs of this list that `other` does not hold.
    pub fn without(&self, other: &CpuList) -> CpuList {
        CpuList(
            self.0
                .iter()
                .copied()
                .filter(|c| !other.0.contains(c))
                .collect(),
        )
    }
}

/// Written back in `taskset -c` syntax, consecutive runs as ranges.
impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            parts.push(if j > i {
                format!("{}-{}", self.0[i], self.0[j])
            } else {
                self.0[i].to_string()
            });
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_as_taskset_reads_them_and_print_back() {
        assert_eq!(CpuList::parse("0-3").unwrap().0, [0, 1, 2, 3]);
        assert_eq!(CpuList::parse("0,2").unwrap().0, [0, 2]);
        assert_eq!(CpuList::parse("4, 0-1,1").unwrap().0, [4, 0, 1]);
        assert_eq!(
            CpuList::parse("0-1,4,6-7").unwrap().to_string(),
            "0-1,4,6-7"
        );
        assert!(CpuList::parse("3-1").is_err());
        assert!(CpuList::parse("a").is_err());
        assert!(CpuList::parse("").is_err());
    }

    #[test]
    fn blocks_share_the_list_evenly_and_leave_the_remainder() {
        let list = CpuList::parse("0-6").unwrap();
        assert_eq!(list.block(0, 3).unwrap().0, [0, 1]);
        assert_eq!(list.block(2, 3).unwrap().0, [4, 5]);
        assert_eq!(list.block(3, 3), None);
        assert_eq!(CpuList::parse("0").unwrap().block(0, 2), None);
        let rest = CpuList::online().without(&CpuList(vec![0]));
        assert!(!rest.0.contains(&0));
    }
}

// Leaks through Rust's standard library, for mprof's partial call chains
// (tests/e2e/87-cxx-names.t): fill grows a Vec (push: Vec, RawVec,
// finish_grow, the Global allocator, __rust_realloc), table fills a
// HashMap (hashbrown under std), bytes makes a vec![7u8; n] (<u8 as
// SpecFromElem>::from_elem: a trait of alloc's on a primitive type); a
// spawned thread's closure builds another, and so does one under
// catch_unwind; all are forgotten, so kept.
use std::collections::HashMap;

#[inline(never)]
fn fill(v: &mut Vec<u64>, n: u64) {
    for i in 0..n {
        v.push(i);
    }
}

#[inline(never)]
fn build(n: u64) -> Vec<u64> {
    let mut v = Vec::new();
    fill(&mut v, n);
    v
}

#[inline(never)]
fn table(n: u64) -> HashMap<u64, u64> {
    let mut m = HashMap::new();
    for i in 0..n {
        m.insert(i, i * 2);
    }
    m
}

#[inline(never)]
fn bytes(n: usize) -> Vec<u8> {
    vec![7u8; n]
}

fn main() {
    let a = build(1000);
    let b = table(100);
    let c = bytes(4096);
    std::thread::spawn(|| std::mem::forget(build(300))).join().unwrap();
    std::mem::forget(std::panic::catch_unwind(|| build(200)).unwrap());
    println!("{} {} {}", a.len(), b.len(), c.len());
    std::mem::forget(a);
    std::mem::forget(b);
    std::mem::forget(c);
}

(* tests/e2e/61-corpus-more.t: an OCaml program (ocamlopt): a hash
   table of lists, a map, strings; its runtime's major heap comes from
   malloc. *)
module M = Map.Make (String)

let () =
  let h = Hashtbl.create 16 in
  for i = 0 to 99_999 do
    let k = "k" ^ string_of_int (i * 7919 mod 1009) in
    Hashtbl.replace h k (i :: (try Hashtbl.find h k with Not_found -> []))
  done;
  let m = Hashtbl.fold (fun k v m -> M.add k (List.length v) m) h M.empty in
  let first = List.filteri (fun i _ -> i < 3) (M.bindings m) in
  Printf.printf "%d %d %s\n" (Hashtbl.length h)
    (M.fold (fun _ n s -> s + n) m 0)
    (String.concat "," (List.map (fun (k, n) -> k ^ "=" ^ string_of_int n) first))

;; tests/e2e/60-corpus.t: a Lisp file run by ecl under mprof and cpprof.
;; Conses a list of (n . collatz length) pairs, groups them in a hash
;; table, sorts a fresh list; deterministic output.
(defun collatz-len (n)
  (loop for k = n then (if (evenp k) (floor k 2) (1+ (* 3 k)))
        for len from 1
        until (= k 1)
        finally (return len)))

(let* ((pairs (loop for i from 1 to 30000 collect (cons i (collatz-len i))))
       (table (make-hash-table))
       (best (reduce (lambda (a b) (if (> (cdr b) (cdr a)) b a)) pairs)))
  (dolist (p pairs)
    (push (car p) (gethash (cdr p) table)))
  (format t "~a ~a ~a~%" (car best) (cdr best) (hash-table-count table))
  (format t "~a~%" (subseq (sort (mapcar #'cdr pairs) #'>) 0 3)))

! tests/e2e/61-corpus-more.t: gfortran's runtime (libgfortran) allocating
! and freeing arrays: allocatable arrays grown by reallocation on
! assignment, allocated and deallocated in a loop (400 matrices, up to
! 400 x 400: some CPU time to sample), a derived type with an allocatable
! component.
program corpus
  implicit none
  type bag
    integer, allocatable :: items(:)
  end type bag
  type(bag), allocatable :: bags(:)
  integer, allocatable :: grow(:)
  real(8), allocatable :: m(:, :)
  integer :: i, j
  integer(8) :: total
  allocate(bags(200))
  allocate(grow(0))
  total = 0
  do i = 1, 200
    allocate(bags(i)%items(mod(i * 37, 101) + 1))
    bags(i)%items = i
    grow = [grow, i]
  end do
  do i = 1, 200
    total = total + sum(bags(i)%items)
    deallocate(bags(i)%items)
  end do
  do j = 1, 400
    allocate(m(j, j))
    m = real(j, 8)
    total = total + int(sum(m), 8)
    deallocate(m)
  end do
  print '(a, i0, a, i0)', 'total ', total, ' grown ', size(grow)
end program corpus
